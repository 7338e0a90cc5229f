#!/usr/bin/env bash
# The distributed-training figures of the README (docs/distributed.md): tgraph on
# data/halide/layout, 20 epochs, 2 graphs per optimiser step, with 1 process (2 threads, then 1) and with
# 2 processes (1 thread each) started by tcost launch, in one run. Prints each run's summary
# lines: steps per second, all-reduce time per step, peak memory per process.
# usage: scripts/dist-figures.sh (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=out/dist-figures
rm -rf "$OUT" && mkdir -p "$OUT"
ARGS=(--data data/halide/layout --model tgraph --epochs 20 --patience 100 --batch-graphs 2 --seed 0)
echo "== 1 process, 2 threads"
build/tcost train "${ARGS[@]}" --threads 2 --out "$OUT/w1.pt" | grep -E "steps/s"
echo "== 1 process, 1 thread"
build/tcost train "${ARGS[@]}" --threads 1 --out "$OUT/w1t1.pt" | grep -E "steps/s"
echo "== 2 processes (tcost launch --nproc 2), 1 thread each"
build/tcost launch --nproc 2 -- train "${ARGS[@]}" --threads 1 --out "$OUT/w2.pt" 2>/dev/null |
  grep -E "steps/s"
