#!/usr/bin/env bash
# Ensembles over seeds: each model trained with seeds 0-8 (scripts/train-seeds.sh, as
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
  bash scripts/train-seeds.sh "$m" 0 1 2 3 4 5 6 7 8
  for g in 0 1 2; do
    build/tcost ensemble --out "$OUT/$m-x3-$g.ens" --member "$m-$((3 * g)).pt" \
      --member "$m-$((3 * g + 1)).pt" --member "$m-$((3 * g + 2)).pt" >/dev/null
  done
done
PYTHONPATH=build/python:scripts /usr/bin/python3 - "$OUT" "${MODELS[@]}" <<'PYEOF'
import sys
from test_scores import HEADER, row, test_views
out, models = sys.argv[1], sys.argv[2:]
views = test_views()
print(HEADER)
for m in models:
    print(row(f"{m}, one seed each (seeds 0-8)", [f"{out}/{m}-{s}.pt" for s in range(9)], views))
    print(row(f"{m}, three seeds averaged (0-2, 3-5, 6-8)",
              [f"{out}/{m}-x3-{g}.ens" for g in range(3)], views))
PYEOF
