#!/usr/bin/env bash
# A protocol's noise across sessions, measured on a sample before a new collection uses it
# (docs/collect.md, "Sizing a new collection across sessions"): twelve programs of twelve families
# (the six noisy ones of noise-knobs.sh and six of other kinds, five of them test families), 40
# schedules each (the default and 39 sampled), under two protocols side by side: `heap` (the
# shipped data's: buffers where the heap puts them, threads unpinned) and `arena-pin`
# (collect --arena --pin-threads). Each protocol is its own collection under $OUT/PROTOCOL, kept
# in the repository so that a later session can measure it again.
#   first: samples and measures the schedules, PASSES passes (default 4), the protocols
#          alternated pass by pass so that the machine's drift falls on both alike;
#   later: a later, independent run (collect --cross-session 40 --session $SESSION, default
#          today's UTC date), the same alternation, PASSES passes; then prints, per protocol,
#          scripts/cross-session-noise.py's comparison (singles, bests of two and three, across
#          the sessions), and scripts/session-pairs.py's table of every pair of sessions so far
#          and of sessions pooled (best of 3 passes a session, or of PASSES when fewer).
# Other samples and protocols (docs/collect.md, "Short programs: a minimum timed total"):
#   PROGRAMS=a,b,... (collect --pipelines), SCHEDULES=N per program (default 40),
#   PROTOCOLS="heap arena-pin arena-pin-50ms" (names of FLAGS below), OUT=dir.
# Must run alone on the machine (no builds or tests meanwhile); about 20 minutes a pass of both
# protocols on this project's 2-core machine. Resumable: run the same command again.
# usage: scripts/cross-study.sh first|later   (after scripts/build.sh; TCOST=binary to use a
#        copy of build/tcost, so that a rebuild meanwhile cannot change it)
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:?usage: scripts/cross-study.sh first|later}
PASSES=${PASSES:-4}
OUT=${OUT:-data/studies/cross}
TCOST=${TCOST:-build/tcost}
SESSION=${SESSION:-$(date -u +%F)}
PROGRAMS=${PROGRAMS:-segment_sum_32x16384x128,row_stats_1024x256,batched_matmul_16x64,matmul_256,gaussian_blur_1024x768,softmax_512x512,conv1x1_14x128x256,resnet_bottleneck_14x256x64,morph_close_1024x768,attention_4x64x64,sobel_1024x768,unsharp_u8_1024x768}
SCHEDULES=${SCHEDULES:-40}  # per program, the default among them
# PROTOCOLS="a b": which of FLAGS's protocols, in the order they take turns.
read -r -a PROTOCOLS <<<"${PROTOCOLS:-heap arena-pin}"
declare -A FLAGS=([heap]="" [arena-pin]="--arena --pin-threads"
                  [arena-pin-50ms]="--arena --pin-threads --min-run-seconds 0.05")
mkdir -p "$OUT"
COMMON=(--pipelines "$PROGRAMS" --configs-per-graph $((SCHEDULES - 1)) --seed 11 --no-ast)
case "$MODE" in
  first) what=() ;;
  later) what=(--cross-session "$SCHEDULES" --session "$SESSION") ;;
  *) echo "unknown mode $MODE (first or later)" >&2; exit 2 ;;
esac
for k in $(seq 1 "$PASSES"); do
  for p in "${PROTOCOLS[@]}"; do
    [ -n "${FLAGS[$p]+set}" ] || { echo "unknown protocol $p (${!FLAGS[*]})" >&2; exit 2; }
    # shellcheck disable=SC2086
    "$TCOST" collect --out "$OUT/$p" "${COMMON[@]}" "${what[@]}" --passes "$k" ${FLAGS[$p]} \
      >"$OUT/$p.log" 2>&1 || { tail -5 "$OUT/$p.log" >&2; exit 1; }
    echo "$(date -u +%T) $MODE pass $k: $p done" >&2
  done
done
if [ "$MODE" = later ]; then
  for p in "${PROTOCOLS[@]}"; do
    echo "## $p"
    PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/cross-session-noise.py "$OUT/$p" "$SESSION"
    # every pair of the sessions so far, and sessions pooled (docs/collect.md, "Sessions, not boots")
    PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/session-pairs.py "$OUT/$p" --passes $((PASSES < 3 ? PASSES : 3))
  done
fi
