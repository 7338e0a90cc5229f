#!/usr/bin/env bash
# Forked timing processes against separate compiles (docs/collect.md, "Forks: one compile, several
# timing processes"): one program of each of the zoo's families (40 when the study ran; the first size `tcost collect
# --list` names), the default and 9 sampled schedules each, every schedule measured 8 times under
# three protocols: 8 passes of one process each (a compile per measurement), 2 passes of 4 forks
# and 4 passes of 2 forks. The protocols take turns, a few passes at a time, so that the
# machine's drift falls on all of them alike. Prints each protocol's agreement of bests of m
# against bests of m (scripts/pass-noise.py) and its cost per measurement.
# usage: scripts/fork-study.sh   (after scripts/build.sh; about 60 minutes on a 2-core machine,
#        with nothing else running). OUT (default out/forks); TCOST (default build/tcost);
#        SHORT=1: only two passes of one process against two compiles of four forks (30 min).
#        ARENA=1: the buffers in tcost's arena (--arena, docs/collect.md "A layout of tcost's
#        own") against the heap: two passes of one process under each, then two compiles of
#        four forks in the arena (about 25 min). ARENA=2: two compiles of four forks each, on
#        the heap and in the arena, taking turns (about 30 min). ARENA=3: the control, in the
#        arena: one compile of four forks against four lone measurements one after another
#        (--compile-each; about 20 min).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/forks}
TCOST=${TCOST:-build/tcost}
P=$("$TCOST" collect --list | awk '!seen[$2]++ {print $1}' | paste -sd, -)
COMMON=(--pipelines "$P" --configs-per-graph 9 --seed 7 --no-ast)
step() {  # NAME PASSES FORKS [FLAG...]
  local t0=$SECONDS
  "$TCOST" collect --out "$OUT/$1" "${COMMON[@]}" --passes "$2" --forks "$3" "${@:4}" \
    >/dev/null 2>&1
  echo "$1: passes $2 x forks $3 ${*:4} done in $((SECONDS - t0)) s" >&2
}
if [ "${ARENA:-0}" = 3 ]; then
  step arena-forks4 1 4 --arena
  step arena-each4 1 4 --arena --compile-each
  SETS=(arena-forks4 arena-each4)
elif [ "${ARENA:-0}" = 2 ]; then
  step forks4 1 4
  step arena-forks4 1 4 --arena
  step forks4 2 4
  step arena-forks4 2 4 --arena
  SETS=(forks4 arena-forks4)
elif [ "${ARENA:-0}" = 1 ]; then
  step passes2 1 1
  step arena2 1 1 --arena
  step passes2 2 1
  step arena2 2 1 --arena
  step arena-forks4 1 4 --arena
  step arena-forks4 2 4 --arena
  SETS=(passes2 arena2 arena-forks4)
elif [ "${SHORT:-0}" = 1 ]; then
  # The short study: two passes of one process against two compiles of four forks.
  step passes2 1 1
  step forks4 1 4
  step passes2 2 1
  step forks4 2 4
  SETS=(passes2 forks4)
else
  step passes8 2 1
  step forks4 1 4
  step forks2 2 2
  step passes8 4 1
  step forks4 2 4
  step forks2 4 2
  step passes8 6 1
  step passes8 8 1
  SETS=(passes8 forks4 forks2)
fi
export PYTHONPATH=build/python:scripts
specs=()
for s in "${SETS[@]}"; do specs+=("$s=$OUT/$s"); done
/usr/bin/python3 scripts/pass-noise.py --compare "${specs[@]}"
/usr/bin/python3 scripts/fork-noise.py "${SETS[@]/#/$OUT/}"
/usr/bin/python3 scripts/process-spread.py --passes 4 "${SETS[@]/#/$OUT/}"
