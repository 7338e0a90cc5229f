#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the bundled default data: train the
# TGraph model, evaluate it on the held-out test split, rank the test graphs' configurations
# into the competition CSV and score that file.
# Until a measured dataset ships under data/, the default data is the synthetic layout dataset
# that `tcost synth` writes into out/synth-layout (100 graphs x 200 configurations, seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
DATA=out/synth-layout
if [ ! -d "$DATA/train" ]; then
  build/tcost synth --out "$DATA" --collection layout --graphs 100 --configs 200 --seed 1
fi
mkdir -p out/models
build/tcost train --data "$DATA" --model tgraph --out out/models/tgraph.pt
build/tcost eval --model out/models/tgraph.pt --data "$DATA" --split test
build/tcost rank --model out/models/tgraph.pt --graph "$DATA/test" --csv out/tgraph-test.csv
build/tcost score --data "$DATA/test" --pred out/tgraph-test.csv
