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
python3 - "${PROGRAMS[@]}" <<'PY'
import json, math, sys
rows = []
for p in sys.argv[1:]:
    j = json.load(open(f"out/bench/tune-{p}.json"))
    rows.append((p, {m["method"]: m for m in j["programs"][0]["methods"]}))
methods = list(rows[0][1])
print("| program | " + " | ".join(methods) + " |")
print("|---|" + "---|" * len(methods))
for p, m in rows:
    cells = [f"{m[k]['runtime_ms']:.3f} ms ({m[k]['search_s']:.1f} s)" if m[k]["ok"] else "failed" for k in methods]
    print(f"| {p} | " + " | ".join(cells) + " |")
def geo(k, ref):
    v = [math.log(m[ref]["runtime_ms"] / m[k]["runtime_ms"]) for _, m in rows if m[k]["ok"] and m[ref]["ok"]]
    return math.exp(sum(v) / len(v)) if v else float("nan")
print("| speed-up over default (geomean) | " + " | ".join(f"{geo(k, 'default'):.2f}x" for k in methods) + " |")
print("| runtime / tcost's (geomean) | " + " | ".join(f"{1 / geo(k, 'tcost'):.2f}" for k in methods) + " |")
PY
