#!/usr/bin/env bash
# The protocol study of the README (docs/collect.md, "Measurement fidelity"): for each protocol
# variant, six programs of different families are measured under 30 schedules each (the default
# and 29 sampled) in one run, then measured again by a second, independent run
# (tcost collect --cross-session 30); the manifest gives the cross-session Kendall tau (best-run
# and median statistics), the spread of new/old runtimes and the cost per schedule.
# Writes out/protocol/VARIANT/ and prints one table row per variant.
# usage: scripts/protocol-study.sh [VARIANT...]   (after scripts/build.sh; ~4-7 min a variant)
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAMS=matmul_256,conv3x3_28x32x32,softmax_512x512,gaussian_blur_1024x768,histogram_eq_1024x768,sobel_1536x1024
declare -A FLAGS=(
  [shipped]=""
  [one-worker]="--workers 1"
  [more-runs]="--min-runs 10 --tolerance 0.01 --max-run-seconds 1"
  [no-warmup]="--warmup-runs 0"
)
VARIANTS=("$@")
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(shipped one-worker more-runs no-warmup)
for v in "${VARIANTS[@]}"; do
  out="out/protocol/$v"
  rm -rf "$out"
  # shellcheck disable=SC2086
  build/tcost collect --out "$out" --pipelines "$PROGRAMS" --configs-per-graph 29 --seed 11 \
    --no-ast ${FLAGS[$v]} >/dev/null
  # shellcheck disable=SC2086
  build/tcost collect --out "$out" --pipelines "$PROGRAMS" --configs-per-graph 29 --seed 11 \
    --no-ast --cross-session 30 --session second ${FLAGS[$v]} | grep "cross-session" |
    sed "s/^/$v: /"
done
