#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the bundled default data.
# Until a measured dataset ships under data/, the default data is a synthetic layout dataset
# written by `tcost synth` into out/synth-layout.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
DATA=out/synth-layout
if [ ! -d "$DATA/train" ]; then
  build/tcost synth --out "$DATA" --collection layout --graphs 100 --configs 200 --seed 1
fi
build/tcost info "$DATA/test"
build/tcost bench
