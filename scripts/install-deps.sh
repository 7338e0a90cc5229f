#!/usr/bin/env bash
# Installs every Debian package tcost needs, on Debian 12 (bookworm).
# Idempotent: when every package is already installed it only checks and exits.
# Run as root (CI does) or with sudo available.
set -euo pipefail

# The one list of the project's system dependencies.
PACKAGES=(
  # toolchain
  build-essential cmake ninja-build clang clang-format git
  # data layer and CLI
  zlib1g-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-numpy
  # models (LibTorch is ~35x slower at matmul without OpenBLAS)
  libtorch-dev libopenblas0-pthread libgloo-dev libxgboost-dev
  # measurement
  libhalide14-0-dev
  # the Python module (build/python) and the report's browser test
  pybind11-dev python3-dev chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js and npm (the report's plotting library comes from the npm registry): Debian's, unless
# a Node.js with npm is already installed (another nodejs package ships npm itself).
if ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The report's plotting library, pinned by third_party/js/package-lock.json: vega, vega-lite and
# vega-embed (tcost report inlines their builds into each page). Installed again only when the
# lock file changed since the last install.
JS="$(cd "$(dirname "$0")/.." && pwd)/third_party/js"
if ! cmp -s "$JS/package-lock.json" "$JS/node_modules/.package-lock.json.installed" 2>/dev/null; then
  echo "install-deps: npm ci in third_party/js"
  (cd "$JS" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$JS/package-lock.json" "$JS/node_modules/.package-lock.json.installed"
fi
echo "install-deps: done"
