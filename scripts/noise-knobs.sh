#!/usr/bin/env bash
# The single-measurement noise of protocol knobs (steady-heap: glibc's tunables in the environment;
# collect --steady-heap does the same with mallopt in the measuring child) (README, "Measurement fidelity"; docs/collect.md,
# "Where single measurements scatter"): six programs of six families, 10 schedules each (the
# default and 9 sampled), each schedule measured in 4 passes (4 measuring processes, pass after
# pass). The knobs are measured in turn, ROUNDS times over (round 1 of every knob, then round 2,
# ...), so that the machine's own drift over the half hour falls on all of them alike; each
# round is its own collection under out/knobs/KNOB-rN. Prints one row per knob: how two single
# measurements of a schedule agree (tau per program, p90/p10 of their ratio), the same for bests
# of two, and the spread of single measurements, mean +- sd over the rounds.
# usage: scripts/noise-knobs.sh [ROUNDS] [KNOB...]   (after scripts/build.sh; about 9 minutes a
#        round of the six knobs). PASSES=2K (default 4) compares bests of up to K; OUT (default
#        out/knobs); PROGRAMS (comma-separated) and SEED (default 5) choose other programs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
shift || true
PASSES=${PASSES:-4}
OUT=${OUT:-out/knobs}
PROGRAMS=${PROGRAMS:-segment_sum_32x16384x128,row_stats_1024x256,batched_matmul_16x64,matmul_256,gaussian_blur_1024x768,softmax_512x512}
SEED=${SEED:-5}
HEAP=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:glibc.malloc.top_pad=268435456
# mmap-buffers: a fixed mmap threshold of 64 KiB (glibc raises it otherwise, after a compile frees
# large blocks), so every buffer of 64 KiB or more is mapped afresh, at the same offset in its
# page, whatever heap the compile left.
MMAP=glibc.malloc.mmap_threshold=65536
# arena: collect --arena (the buffers in tcost's arena; docs/collect.md, "A layout of tcost's own");
# arena-pin: with --pin-threads too; huge-pin: the arena on huge pages (--huge-pages), pinned.
# TCOST (default build/tcost) names the binary.
KNOBS=(default spin-pool pin-threads one-worker steady-heap one-thread)
[ $# -gt 0 ] && KNOBS=("$@")
declare -A FLAGS=(
  [default]=""
  [spin-pool]="--spin-pool"
  [pin-threads]="--pin-threads"
  [one-worker]="--workers 1"
  [steady-heap]=""
  [one-thread]="--threads 1"
  [one-worker-spin-heap]="--workers 1 --spin-pool --steady-heap"
  [spin-heap]="--spin-pool --steady-heap"
  [mmap-buffers]=""
  [arena]="--arena"
  [arena-pin]="--arena --pin-threads"
  [huge-pin]="--huge-pages --pin-threads"
)
COMMON=(--pipelines "$PROGRAMS" --configs-per-graph 9 --seed "$SEED" --no-ast --passes "$PASSES")
for r in $(seq 1 "$ROUNDS"); do
  for k in "${KNOBS[@]}"; do
    out="$OUT/$k-r$r"
    env=()
    [ "$k" = steady-heap ] && env=(env "GLIBC_TUNABLES=$HEAP")
    [ "$k" = mmap-buffers ] && env=(env "GLIBC_TUNABLES=$MMAP")
    # shellcheck disable=SC2086
    "${env[@]}" "${TCOST:-build/tcost}" collect --out "$out" "${COMMON[@]}" ${FLAGS[$k]} >/dev/null 2>&1
    echo "round $r: $k done" >&2
  done
done
specs=()
for k in "${KNOBS[@]}"; do
  dirs=$(seq -s, -f "$OUT/$k-r%g" 1 "$ROUNDS")
  specs+=("$k=$dirs")
done
PYTHONPATH=build/python /usr/bin/python3 scripts/pass-noise.py --compare "${specs[@]}"
