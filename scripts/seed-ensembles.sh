#!/usr/bin/env bash
# Ensembles over seeds: each model trained with seeds 0-8 (default options, --threads 1, as
# scripts/model-seeds.sh trains seeds 0-2, whose checkpoints in out/model-seeds it reuses), then
# three ensembles of three seeds each (0-2, 3-5, 6-8; `tcost ensemble`, standardised costs
# averaged), all scored on the test programs of data/halide through the Python module: mean
# test tau ± sd over the checkpoints, geomean slowdown@1 and @5 over all of them.
# usage: scripts/seed-ensembles.sh [MODEL...]   (after scripts/build.sh; default tgraph ast-gcn
# tgraph-ast xgb; about 25 minutes when nothing is trained yet)
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(tgraph ast-gcn tgraph-ast xgb)
OUT=out/model-seeds
mkdir -p "$OUT"
for m in "${MODELS[@]}"; do
  data=data/halide/layout
  [ "$m" = ast-gcn ] && data=data/halide/ast
  [ "$m" = tgraph-ast ] && data=data/halide
  for s in 0 1 2 3 4 5 6 7 8; do
    [ -f "$OUT/$m-$s.pt" ] && continue
    build/tcost train --data "$data" --model "$m" --seed "$s" --out "$OUT/$m-$s.pt" --quiet \
      --threads 1 >/dev/null
  done
  for g in 0 1 2; do
    build/tcost ensemble --out "$OUT/$m-x3-$g.ens" --member "$m-$((3 * g)).pt" \
      --member "$m-$((3 * g + 1)).pt" --member "$m-$((3 * g + 2)).pt" >/dev/null
  done
done
PYTHONPATH=build/python /usr/bin/python3 - "$OUT" "${MODELS[@]}" <<'PYEOF'
import glob, math, os, sys
import numpy as np
import tcost
out, models = sys.argv[1], sys.argv[2:]
names = [os.path.basename(f)[:-4] for f in sorted(glob.glob("data/halide/layout/test/*.npz"))]
views = {v: [tcost.load(f"data/halide/{v}/test/{n}.npz") for n in names] for v in ("layout", "ast")}


def scores(path):
    m = tcost.Model(path, threads=1)
    taus, s1, s5 = [], [], []
    for g, a in zip(views["layout"], views["ast"]):
        cost = m.predict(g, ast=a)  # each model reads the view(s) it needs
        truth = g["config_runtime"]
        taus.append(tcost.kendall_tau(cost, truth))
        s1.append(1 + tcost.slowdown(cost, truth, 1))
        s5.append(1 + tcost.slowdown(cost, truth, 5))
    return np.mean(taus), s1, s5


def row(label, paths):
    r = [scores(p) for p in paths]
    taus = [x[0] for x in r]
    geo = lambda k: math.exp(np.mean([math.log(v) for x in r for v in x[k]]))
    print(f"| {label} | {len(paths)} | {np.mean(taus):.3f} ± {np.std(taus):.3f} | "
          f"{geo(1):.2f}x | {geo(2):.2f}x |")


print("| model | checkpoints | mean test tau ± sd | geomean slowdown@1 | slowdown@5 |")
print("|---|---|---|---|---|")
for m in models:
    row(f"{m}, one seed each (seeds 0-8)", [f"{out}/{m}-{s}.pt" for s in range(9)])
    row(f"{m}, three seeds averaged (0-2, 3-5, 6-8)", [f"{out}/{m}-x3-{g}.ens" for g in range(3)])
PYEOF
