#!/usr/bin/env bash
# Installs dependencies, builds, checks formatting and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/check-format.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
