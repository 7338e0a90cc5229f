#!/usr/bin/env bash
# The README's second tuning table: the tests' own Halide generators (tests/plugin/generators.cpp)
# scheduled through the TCost plugin, as a Halide user runs it, with TCOST_COMPARE asking the
# plugin to put every method side by side on the generator's pipeline first: the default
# schedule, random search with the same budget, Li2018, Mullapudi2016, Adams2019 (beam 32 and
# greedy) and tcost (64 measurements, 5 minutes at most), all measured by the same protocol in
# one run, outputs checked against the default schedule's. Writes out/bench/gen-NAME.json.
# usage: scripts/tune-generators-table.sh [GENERATOR...]   (run scripts/build.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
GENS=("$@")
[ ${#GENS[@]} -gt 0 ] || GENS=(box_blur_u8 histogram_u8 prefix_sum minmax_u16 lookup_tone
  pyramid_u16 conv_relu_f32 matmul_f32 brighten_params softmax_rows)
# The host target without avx512_sapphirerapids (Halide 14 emits AVX512-FP16 code under it).
TARGET=$(/usr/lib/x86_64-linux-gnu/halide14/get_host_target | sed 's/-avx512_sapphirerapids//')
mkdir -p out/bench
for g in "${GENS[@]}"; do
  d=out/bench/gen-$g
  rm -rf "$d" "$d.json" "$d.jsonl"*
  mkdir -p "$d"
  TCOST_COMPARE=default,random,li2018,mullapudi2016,adams2019,adams2019-greedy,tcost \
    TCOST_COMPARE_OUT="$d.json" TCOST_LOG="$d.jsonl" TCOST_BUDGET=64 TCOST_TIME_BUDGET=5 \
    TCOST_THREADS=2 TCOST_SEED=0 \
    build/tcost_test_generators -g "$g" -o "$d" -e static_library,h,schedule target="$TARGET" \
    auto_schedule=true machine_params=2,16777216,40 -p build/libautoschedule_tcost.so -s TCost \
    >"$d/gen.log" 2>&1 || { echo "$g: generator failed (see $d/gen.log)"; continue; }
  echo "$g done"
done
pairs=()
for g in "${GENS[@]}"; do pairs+=("$g=out/bench/gen-$g.json"); done
/usr/bin/python3 scripts/tune-table.py generator "${pairs[@]}"
