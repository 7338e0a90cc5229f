#!/usr/bin/env bash
# The TCost autoscheduler plugin on our own generators (tests/plugin/generators.cpp), as a
# Halide user runs it: each generator is compiled under its default schedule and scheduled by
# TCost (with a small measurement budget, and with TCOST_BUDGET=0), both are built into
# Halide's RunGen runner, run on the same seeded inputs from the estimates, and their outputs
# compared: integers bit for bit, floats within 1e-4 of the output's largest magnitude.
# Also: a rerun with the same TCOST_LOG searches nothing; a missing estimate is named.
# usage: plugin_test.sh GENERATORS PLUGIN RUNGEN_OBJECT CXX PYTHON3 HALIDE_LIB
set -u
GEN=$1
PLUGIN=$2
RUNGEN=$3
CXX=$4
PY=$5
HALIDE_LIB=$6
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# The host target without avx512_sapphirerapids: Halide 14 emits AVX512-FP16 code under it,
# which the AMD EPYC CPUs of this project cannot run (SIGILL).
TARGET=$("$(dirname "$HALIDE_LIB")/halide14/get_host_target" | sed 's/-avx512_sapphirerapids//')
export TCOST_SEED=1 TCOST_THREADS=2 TCOST_TIME_BUDGET=2
MP=machine_params=2,16777216,40

build() {  # build NAME DIR FUNC [generator args...]: static library + RunGen runner
  local g=$1 d=$2 f=$3
  shift 3
  mkdir -p "$d"
  if ! "$GEN" -g "$g" -f "$f" -o "$d" -e static_library,h,registration,schedule \
    target="$TARGET" "$@" >"$d/gen.log" 2>&1; then
    bad "$g: generator failed in $d"
    tail -5 "$d/gen.log"
    return 1
  fi
  "$CXX" -O1 -o "$d/run" "$RUNGEN" "$d/$f.registration.cpp" "$d/$f.a" -ldl -lpthread ||
    { bad "$g: runner did not link"; return 1; }
}

run() {  # run DIR OUTPUTS...: outputs written as .tmp files
  local d=$1
  shift
  local args=()
  for o in "$@"; do args+=("$o=$d/$o.tmp"); done
  "$d/run" --estimate_all --quiet "${args[@]}" >"$d/run.log" 2>&1
}

compare() {  # compare A.tmp B.tmp
  "$PY" - "$1" "$2" <<'EOF'
import sys
import numpy as np
codes = [np.float32, np.float64, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
         np.uint64, np.int64]
def load(path):
    raw = open(path, "rb").read()
    h = np.frombuffer(raw[:20], dtype=np.int32)
    return np.frombuffer(raw[20:], dtype=codes[h[4]]), h
a, ha = load(sys.argv[1])
b, hb = load(sys.argv[2])
if list(ha) != list(hb) or a.shape != b.shape:
    sys.exit(f"shapes differ: {list(ha)} vs {list(hb)}")
if np.issubdtype(a.dtype, np.floating):
    tol = 1e-4 * max(1.0, float(np.nanmax(np.abs(a))))
    bad = np.abs(a.astype(np.float64) - b.astype(np.float64)) > tol
else:
    bad = a != b
if bad.any():
    i = int(np.argmax(bad))
    sys.exit(f"{int(bad.sum())} values differ, first at {i}: {b[i]} instead of {a[i]}")
EOF
}

check_generator() {  # check_generator NAME OUTPUTS...
  local g=$1
  shift
  build "$g" "$W/$g/ref" "${g}_ref" || return
  run "$W/$g/ref" "$@" || { bad "$g: reference run failed"; cat "$W/$g/ref/run.log"; return; }
  for budget in 3 0; do
    local d="$W/$g/tcost$budget"
    TCOST_BUDGET=$budget build "$g" "$d" "${g}_tc$budget" auto_schedule=true "$MP" \
      -p "$PLUGIN" -s TCost || continue
    grep -q "tcost schedule" "$d/${g}_tc$budget.schedule.h" && ok ||
      bad "$g: no schedule source in $d"
    run "$d" "$@" || { bad "$g (budget $budget): run failed"; cat "$d/run.log"; continue; }
    local o
    for o in "$@"; do
      if msg=$(compare "$W/$g/ref/$o.tmp" "$d/$o.tmp" 2>&1); then ok; else
        bad "$g (budget $budget) output $o: $msg"
      fi
    done
  done
}

check_generator box_blur_u8 output
check_generator histogram_u8 output
check_generator prefix_sum output
check_generator minmax_u16 lo range
check_generator lookup_tone output
check_generator pyramid_u16 output
check_generator conv_relu_f32 output
check_generator matmul_f32 output
check_generator brighten_params output
check_generator softmax_rows output

# A rerun with the same log applies the best schedule on record without searching. The first
# run measures under the other protocol (TCOST_ARENA, TCOST_PIN_THREADS), and its records say so.
export TCOST_BUDGET=3
TCOST_ARENA=1 TCOST_PIN_THREADS=1 TCOST_LOG="$W/log.jsonl" build matmul_f32 "$W/log1" mm1 \
  auto_schedule=true "$MP" -p "$PLUGIN" -s TCost && ok
[ "$(grep -c '"pinned":true,"placement":"arena"' "$W/log.jsonl")" -ge 2 ] && ok ||
  { bad "TCOST_ARENA, TCOST_PIN_THREADS: the records do not say so"; cat "$W/log.jsonl"; }
TCOST_LOG="$W/log.jsonl" build matmul_f32 "$W/log2" mm2 auto_schedule=true "$MP" -p "$PLUGIN" \
  -s TCost && ok
grep -q "best on record" "$W/log2/gen.log" && ok || { bad "rerun searched again"; cat "$W/log2/gen.log"; }
[ "$(grep -c '"pass":1' "$W/log.jsonl")" -ge 2 ] && ok || bad "log has no measurements"

# A missing estimate is an error that names the output.
mkdir -p "$W/ne"
if "$GEN" -g no_estimates -o "$W/ne" -e static_library,h target="$TARGET" auto_schedule=true \
  "$MP" -p "$PLUGIN" -s TCost >"$W/ne.log" 2>&1; then
  bad "no_estimates: the generator succeeded"
else
  grep -q "output" "$W/ne.log" && grep -q "estimate" "$W/ne.log" && ok ||
    { bad "no_estimates: unclear error"; cat "$W/ne.log"; }
fi

# TCOST_COMPARE: methods side by side on the generator's pipeline, written as JSON, each method's
# schedule confirmed once in a fresh process (TCOST_CONFIRM); the search after it takes tcost's
# best on record instead of searching again.
mkdir -p "$W/cmp"
if TCOST_COMPARE=default,adams2019-greedy,tcost TCOST_COMPARE_OUT="$W/cmp/c.json" \
  TCOST_LOG="$W/cmp/log.jsonl" TCOST_BUDGET=3 TCOST_CONFIRM=1 "$GEN" -g brighten_params -o "$W/cmp" \
  -e static_library,h target="$TARGET" auto_schedule=true "$MP" -p "$PLUGIN" -s TCost \
  >"$W/cmp.log" 2>&1; then
  "$PY" - "$W/cmp/c.json" <<'EOF' && ok || bad "TCOST_COMPARE: wrong comparison $(cat "$W/cmp/c.json")"
import json, sys
m = {r["method"]: r for r in json.load(open(sys.argv[1]))["programs"][0]["methods"]}
assert list(m) == ["default", "adams2019-greedy", "tcost"], list(m)
assert all(r["ok"] and r["runtime_ms"] > 0 for r in m.values()), m
assert m["tcost"]["measurements"] <= 3, m["tcost"]
assert all(len(r["confirm_ms"]) == 1 and r["runtime_ms"] == r["confirm_ms"][0] for r in m.values()), m
EOF
  grep -q "best on record" "$W/cmp.log" && ok || { bad "TCOST_COMPARE: searched twice"; cat "$W/cmp.log"; }
else
  bad "TCOST_COMPARE: the generator failed"
  cat "$W/cmp.log"
fi
if TCOST_COMPARE=bogus TCOST_COMPARE_OUT="$W/cmp/d.json" "$GEN" -g brighten_params -o "$W/cmp" \
  -e static_library,h target="$TARGET" auto_schedule=true "$MP" -p "$PLUGIN" -s TCost \
  >"$W/cmp2.log" 2>&1; then
  bad "TCOST_COMPARE=bogus: accepted"
else
  grep -q "unknown method 'bogus'" "$W/cmp2.log" && ok || { bad "TCOST_COMPARE=bogus: unclear"; cat "$W/cmp2.log"; }
fi
if TCOST_ARENA=yes "$GEN" -g brighten_params -o "$W/cmp" -e static_library,h target="$TARGET" \
  auto_schedule=true "$MP" -p "$PLUGIN" -s TCost >"$W/arena.log" 2>&1; then
  bad "TCOST_ARENA=yes: accepted"
else
  grep -q "TCOST_ARENA: expected 0 or 1, found 'yes'" "$W/arena.log" && ok ||
    { bad "TCOST_ARENA=yes: unclear"; cat "$W/arena.log"; }
fi
if TCOST_COMPARE=default TCOST_CONFIRM=-1 TCOST_COMPARE_OUT="$W/cmp/e.json" "$GEN" -g brighten_params \
  -o "$W/cmp" -e static_library,h target="$TARGET" auto_schedule=true "$MP" -p "$PLUGIN" -s TCost \
  >"$W/cmp3.log" 2>&1; then
  bad "TCOST_CONFIRM=-1: accepted"
else
  grep -q "TCOST_CONFIRM: -1 is not in 0..100" "$W/cmp3.log" && ok || { bad "TCOST_CONFIRM=-1: unclear"; cat "$W/cmp3.log"; }
fi
# TCOST_PRERANK is for models that read syntax trees: beside a layout model it is refused,
# clearly (the two stages themselves: tests/tune and the CLI test).
mkdir -p "$W/pre"
if TCOST_PRERANK="$(dirname "$0")/../../models/tgraph-halide.pt" "$GEN" -g brighten_params -o "$W/pre" \
  -e static_library,h target="$TARGET" auto_schedule=true "$MP" -p "$PLUGIN" -s TCost \
  >"$W/pre.log" 2>&1; then
  bad "TCOST_PRERANK beside a layout model: accepted"
else
  grep -q "pre-ranking model is for models that read syntax trees" "$W/pre.log" && ok ||
    { bad "TCOST_PRERANK beside a layout model: unclear"; cat "$W/pre.log"; }
fi

echo "plugin: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
