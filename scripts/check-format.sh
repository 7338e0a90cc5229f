#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (the root .clang-format) would write.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.h' 2>/dev/null || find src tests fuzz -name '*.cpp' -o -name '*.h')
bad=0
for f in $files; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "clang-format: $f needs formatting (run: clang-format -i $f)"
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "clang-format: clean"
exit "$bad"
