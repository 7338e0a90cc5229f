#!/usr/bin/env bash
# The protocol study of the README (docs/collect.md, "Measurement fidelity"): for each protocol
# variant, six programs of different families are measured under 30 schedules each (the default
# and 29 sampled) in one run, then measured again by a second, independent run
# (tcost collect --cross-session 30). Each variant's manifest gives the cross-session Kendall
# tau (best-run and median statistics), the spread of new/old runtimes and the elapsed time per
# schedule. The "interleaved" row takes, per schedule, the minimum of two runs in each session
# (two more independent runs of the strict-lock variant: sessions 3 and 4 against 1 and 2).
# Writes out/protocol/VARIANT/ and prints a markdown table.
# usage: scripts/protocol-study.sh   (after scripts/build.sh; about 25 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAMS=matmul_256,conv3x3_28x32x32,softmax_512x512,gaussian_blur_1024x768,histogram_eq_1024x768,sobel_1536x1024
declare -A FLAGS=(
  [shipped]="--no-strict-lock"
  [no-warmup]="--no-strict-lock --warmup-runs 0"
  [more-runs]="--no-strict-lock --min-runs 10 --tolerance 0.01 --max-run-seconds 1"
  [one-worker]="--no-strict-lock --workers 1"
  [strict-lock]=""
)
VARIANTS=(shipped no-warmup more-runs one-worker strict-lock)
COMMON=(--pipelines "$PROGRAMS" --configs-per-graph 29 --seed 11 --no-ast)
for v in "${VARIANTS[@]}"; do
  out="out/protocol/$v"
  rm -rf "$out"
  # shellcheck disable=SC2086
  build/tcost collect --out "$out" "${COMMON[@]}" ${FLAGS[$v]} >/dev/null
  # shellcheck disable=SC2086
  build/tcost collect --out "$out" "${COMMON[@]}" --cross-session 30 --session second \
    ${FLAGS[$v]} >/dev/null
  echo "$v done" >&2
done
# Two more independent runs of the strict-lock variant, for the interleaved minimum.
for s in third fourth; do
  build/tcost collect --out out/protocol/strict-lock "${COMMON[@]}" --cross-session 30 \
    --session "$s" >/dev/null
done
PY=/usr/bin/python3
"$PY" - "${VARIANTS[@]}" <<'PYEOF'
import json, sys
import numpy as np

def tau_b(x, y):
    n = len(x); c = d = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            a, b = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            if a == 0 and b == 0: continue
            if a == 0: tx += 1
            elif b == 0: ty += 1
            elif a == b: c += 1
            else: d += 1
    den = ((c + d + tx) * (c + d + ty)) ** 0.5
    return (c - d) / den if den else float("nan")

print("| protocol | cross-session tau (best run) | (median run) | new/old p10 | p90 | p90/p10 | s per schedule |")
print("|---|---|---|---|---|---|---|")
for v in sys.argv[1:]:
    n = json.load(open(f"out/protocol/{v}/manifest.json"))["noise"]
    c = n["cross_session"]; r = c["ratio_new_over_old"]
    print(f"| {v} | {n['cross_session_tau']:.3f} | {c['tau_median_statistic']:.3f} | {r['p10']:.3f} | "
          f"{r['p90']:.3f} | {r['p90_over_p10']:.3f} | {c['seconds_per_schedule']:.2f} |")
# Interleaved: per schedule, min of (first pass, session two) against min of (sessions three, four).
recs = [json.loads(l) for l in open("out/protocol/strict-lock/measurements.jsonl")]
first = {r["key"]: r for r in recs if r.get("pass", 1) == 1 and r["ok"]}
sess = {}
for r in recs:
    if r.get("pass") == 4 and r["ok"]:
        sess.setdefault(r["session"], {})[r["key"].split("|", 2)[2]] = r["best_ns"]
taus, ratios = [], []
for prog in sorted({r["instance"] for r in first.values()}):
    keys = [k for k, r in first.items() if r["instance"] == prog and all(k in sess.get(s, {}) for s in ("second", "third", "fourth"))]
    a = [min(first[k]["best_ns"], sess["second"][k]) for k in keys]
    b = [min(sess["third"][k], sess["fourth"][k]) for k in keys]
    if len(keys) >= 2: taus.append(tau_b(a, b))
    ratios += [y / x for x, y in zip(a, b)]
ratios.sort()
q = lambda p: ratios[int(p * (len(ratios) - 1) + 0.5)]
print(f"| strict-lock, min of 2 runs per session (interleaved) | {np.mean(taus):.3f} | - | {q(0.1):.3f} | {q(0.9):.3f} | {q(0.9)/q(0.1):.3f} | 2x strict-lock |")
PYEOF
