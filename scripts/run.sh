#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the bundled default data: train the
# TGraph model, evaluate it on the held-out test programs, rank the test graphs' configurations
# into the competition CSV and score that file.
# The default data is the measured Halide dataset shipped in data/halide (layout collection;
# see data/halide/manifest.json). Without it, a synthetic layout dataset is written to
# out/synth-layout (100 graphs x 200 configurations, seed 1) and used instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
if [ -d data/halide/layout/train ]; then
  DATA=data/halide/layout
  NAME=tgraph-halide
else
  DATA=out/synth-layout
  NAME=tgraph
  if [ ! -d "$DATA/train" ]; then
    build/tcost synth --out "$DATA" --collection layout --graphs 100 --configs 200 --seed 1
  fi
fi
mkdir -p out/models
build/tcost train --data "$DATA" --model tgraph --out "out/models/$NAME.pt"
build/tcost eval --model "out/models/$NAME.pt" --data "$DATA" --split test
build/tcost rank --model "out/models/$NAME.pt" --graph "$DATA/test" --csv "out/$NAME-test.csv"
build/tcost score --data "$DATA/test" --pred "out/$NAME-test.csv"
