#!/usr/bin/env bash
# The tuner's choice among its fastest schedules (`tcost tune --finalists N`) against the single
# fastest run (--finalists 1, the default): one search per program with the shipped layout model
# (64 measurements, 5 minutes at most), the N fastest measured once more, and both choices
# confirmed side by side in the same fresh processes' rounds (`--confirm 3`; one confirmation
# series when they are the same schedule). Prints per program the two confirmed runtimes and
# their ratio, then the geomean over the programs where the choices differ and over all.
# POOL="DIR..." prints the table over runs already made (one directory each) without tuning.
# Writes out/finalists/PROGRAM.json and the logs beside. Run scripts/build.sh first.
# usage: N=4 SEED=0 OUT=out/finalists TCOST=build/tcost scripts/tune-finalists.sh [PROGRAM...]
# (default: the 15 test programs, 12 minutes on the data's 2-core AMD EPYC)
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAMS=("$@")
[ ${#PROGRAMS[@]} -gt 0 ] || mapfile -t PROGRAMS < <(ls data/halide/layout/test | sed 's/\.npz$//')
OUT=${OUT:-out/finalists}
mkdir -p "$OUT"
for p in "${PROGRAMS[@]}"; do
  [ -n "${POOL:-}" ] && break  # only the table
  [ -s "$OUT/$p.json" ] && continue  # done in an earlier run of this study
  rm -f "$OUT/$p".jsonl*
  "${TCOST:-build/tcost}" tune --program "$p" --model models/tgraph-halide.pt --budget 64 \
    --time-budget 5 --finalists "${N:-4}" --compare default --confirm 3 --seed "${SEED:-0}" \
    --log "$OUT/$p.jsonl" --json >"$OUT/$p.json.tmp" 2>/dev/null
  mv "$OUT/$p.json.tmp" "$OUT/$p.json"
  echo "$p done"
done
# POOL="DIR DIR...": the table over several runs' directories (each run's programs, pooled).
read -r -a DIRS <<<"${POOL:-$OUT}"
/usr/bin/python3 - "${#DIRS[@]}" "${DIRS[@]}" "${PROGRAMS[@]}" <<'PY'
import json, math, os, sys
n = int(sys.argv[1])
dirs, programs = sys.argv[2:2 + n], sys.argv[2 + n:]
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
print("| run | program | finalists' choice, ms | fastest run's schedule, ms | ratio | search's best run / confirmed (finalists, fastest run) |")
print("|---|---|---|---|---|---|")
ratios, differ, opt_f, opt_r = [], [], [], []
for d in dirs:
    for p in programs:
        if not os.path.exists(f"{d}/{p}.json"):
            continue
        m = {r["method"]: r for r in json.load(open(f"{d}/{p}.json"))["programs"][0]["methods"]}
        f, r = m["tcost"], m["tcost-fastest-run"]
        if not (f["ok"] and r["ok"]):
            print(f"| {d} | {p} | {f['error'] or 'ok'} | {r['error'] or 'ok'} | | |")
            continue
        same = f["confirm_ms"] == r["confirm_ms"]
        ratio = f["runtime_ms"] / r["runtime_ms"]
        ratios.append(ratio)
        if not same:
            differ.append(ratio)
        opt_f.append(f["search_runtime_ms"] / f["runtime_ms"])
        opt_r.append(r["search_runtime_ms"] / r["runtime_ms"])
        print(f"| {d} | {p} | {f['runtime_ms']:.3f} | {r['runtime_ms']:.3f}{' (the same schedule)' if same else ''} | "
              f"{ratio:.3f} | {opt_f[-1]:.2f}, {opt_r[-1]:.2f} |")
better = sum(r < 1 for r in differ)
print(f"| geomean, the {len(differ)} searches where the choices differ ({better} better, {len(differ) - better} worse) | | | | {geo(differ):.3f} | |")
print(f"| geomean, all {len(ratios)} searches | | | | {geo(ratios):.3f} | {geo(opt_f):.2f}, {geo(opt_r):.2f} |")
PY
