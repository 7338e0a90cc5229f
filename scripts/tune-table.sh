#!/usr/bin/env bash
# The README's tuning table: tcost (the shipped model, 64 measurements, 5 minutes at most per
# program) beside the default schedule, random search with the same budget and Halide 14's
# autoschedulers, all measured by the same protocol in one run, on one program of each test
# family of the zoo. Writes out/bench/tune-PROGRAM.json and .txt (run scripts/build.sh first).
# usage: scripts/tune-table.sh [PROGRAM...]
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAMS=("$@")
[ ${#PROGRAMS[@]} -gt 0 ] || PROGRAMS=(attention_8x64x64 conv1x1_28x64x128 morph_close_1536x1024
  resnet_bottleneck_28x128x32 sobel_1536x1024)
mkdir -p out/bench
for p in "${PROGRAMS[@]}"; do
  rm -f "out/bench/tune-$p.jsonl"*
  build/tcost tune --program "$p" --model models/tgraph-halide.pt --budget 64 --time-budget 5 \
    --compare default,random,li2018,mullapudi2016,adams2019,adams2019-greedy \
    --log "out/bench/tune-$p.jsonl" --autoschedule-timeout 900 --json >"out/bench/tune-$p.json"
  echo "$p done"
done
pairs=()
for p in "${PROGRAMS[@]}"; do pairs+=("$p=out/bench/tune-$p.json"); done
/usr/bin/python3 scripts/tune-table.py program "${pairs[@]}"
