#!/usr/bin/env bash
# Every layout model on every synthetic generator (docs/synth.md), over seeds (the README's
# generator table): for each generator a dataset (`tcost synth --generator G`, GRAPHS graphs of
# CONFIGS configurations, data seed 1, the generator's own noise and sizes), then gcn-baseline,
# sage, tgraph and xgb trained with default options and seeds 0, 1 and 2 and scored on the test
# graphs: mean test Kendall tau (mean over graphs, then mean ± sd over seeds).
# usage: scripts/synth-generators.sh [GENERATOR...]
#   (after scripts/build.sh; GRAPHS=60 CONFIGS=150 by default; about 30 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
GENS=("$@")
[ ${#GENS[@]} -gt 0 ] || GENS=(standard fusion compute movement)
GRAPHS=${GRAPHS:-60}
CONFIGS=${CONFIGS:-150}
OUT=out/synth-generators
mkdir -p "$OUT"
for g in "${GENS[@]}"; do
  data=$OUT/data-$g
  rm -rf "$data"
  build/tcost synth --out "$data" --collection layout --graphs "$GRAPHS" --configs "$CONFIGS" \
    --seed 1 --generator "$g" >/dev/null
  for m in gcn-baseline sage tgraph xgb; do
    for s in 0 1 2; do
      start=$(date +%s.%N)
      build/tcost train --data "$data" --model "$m" --seed "$s" --out "$OUT/$g-$m-$s.pt" \
        --quiet >/dev/null
      end=$(date +%s.%N)
      build/tcost eval --model "$OUT/$g-$m-$s.pt" --data "$data" --split test --json \
        >"$OUT/$g-$m-$s.json"
      awk "BEGIN { print $end - $start }" >"$OUT/$g-$m-$s.seconds"
    done
  done
  echo "$g done" >&2
done
python3 - "$OUT" "${GENS[@]}" <<'PY'
import json, statistics, sys
out, gens = sys.argv[1], sys.argv[2:]
models = ["gcn-baseline", "sage", "tgraph", "xgb"]
def tau(path):
    return json.load(open(path))["mean_kendall_tau"]
print("| model | " + " | ".join(gens) + " |")
print("|---|" + "---|" * len(gens))
for m in models:
    cells = []
    for g in gens:
        t = [tau(f"{out}/{g}-{m}-{s}.json") for s in range(3)]
        secs = statistics.mean(float(open(f"{out}/{g}-{m}-{s}.seconds").read()) for s in range(3))
        cells.append(f"{statistics.mean(t):.3f} ± {statistics.pstdev(t):.3f} ({secs:.0f} s)")
    print(f"| {m} | " + " | ".join(cells) + " |")
PY
