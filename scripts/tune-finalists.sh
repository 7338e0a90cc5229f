#!/usr/bin/env bash
# The tuner's choice among its fastest schedules (`tcost tune --finalists N`) against the single
# fastest run (--finalists 1, the default): one search per program with the shipped layout model
# (64 measurements, 5 minutes at most), the N fastest measured once more, and both choices
# confirmed side by side in the same fresh processes' rounds (`--confirm 3`; one confirmation
# series when they are the same schedule). Prints per program the two confirmed runtimes and
# their ratio, then the geomean over the programs where the choices differ and over all.
# Writes out/finalists/PROGRAM.json and the logs beside. Run scripts/build.sh first.
# usage: N=4 TCOST=build/tcost scripts/tune-finalists.sh [PROGRAM...]  (default: the 15 test
# programs, about 50 minutes on the data's 2-core AMD EPYC)
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAMS=("$@")
[ ${#PROGRAMS[@]} -gt 0 ] || mapfile -t PROGRAMS < <(ls data/halide/layout/test | sed 's/\.npz$//')
OUT=${OUT:-out/finalists}
mkdir -p "$OUT"
for p in "${PROGRAMS[@]}"; do
  [ -s "$OUT/$p.json" ] && continue  # done in an earlier run of this study
  rm -f "$OUT/$p".jsonl*
  "${TCOST:-build/tcost}" tune --program "$p" --model models/tgraph-halide.pt --budget 64 \
    --time-budget 5 --finalists "${N:-4}" --compare default --confirm 3 \
    --log "$OUT/$p.jsonl" --json >"$OUT/$p.json.tmp" 2>/dev/null
  mv "$OUT/$p.json.tmp" "$OUT/$p.json"
  echo "$p done"
done
/usr/bin/python3 - "$OUT" "${PROGRAMS[@]}" <<'PY'
import json, math, sys
out, programs = sys.argv[1], sys.argv[2:]
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
print("| program | finalists' choice, ms | fastest run's schedule, ms | ratio | search's best run / confirmed (finalists, fastest run) |")
print("|---|---|---|---|---|")
ratios, differ, opt_f, opt_r = [], [], [], []
for p in programs:
    m = {r["method"]: r for r in json.load(open(f"{out}/{p}.json"))["programs"][0]["methods"]}
    f, r = m["tcost"], m["tcost-fastest-run"]
    if not (f["ok"] and r["ok"]):
        print(f"| {p} | {f['error'] or 'ok'} | {r['error'] or 'ok'} | | |")
        continue
    same = f["confirm_ms"] == r["confirm_ms"]
    ratio = f["runtime_ms"] / r["runtime_ms"]
    ratios.append(ratio)
    if not same:
        differ.append(ratio)
    opt_f.append(f["search_runtime_ms"] / f["runtime_ms"])
    opt_r.append(r["search_runtime_ms"] / r["runtime_ms"])
    print(f"| {p} | {f['runtime_ms']:.3f} | {r['runtime_ms']:.3f}{' (the same schedule)' if same else ''} | "
          f"{ratio:.3f} | {opt_f[-1]:.2f}, {opt_r[-1]:.2f} |")
print(f"| geomean, the {len(differ)} programs where the choices differ | | | {geo(differ):.3f} | |")
print(f"| geomean, all {len(ratios)} | | | {geo(ratios):.3f} | {geo(opt_f):.2f}, {geo(opt_r):.2f} |")
PY
