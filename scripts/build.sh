#!/usr/bin/env bash
# Configures and builds tcost into build/ (Release, warnings as errors). Binary: build/tcost.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTCOST_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
