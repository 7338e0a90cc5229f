#!/usr/bin/env bash
# Trains every model with default options on the default synthetic datasets and prints a
# Markdown table of mean test Kendall tau (the README's model table comes from this script).
# Given a collection's two views (ROOT/layout ROOT/ast), tgraph-ast reads them together too.
# usage: scripts/model-table.sh [LAYOUT_DATA] [AST_DATA]   (run scripts/build.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
LAYOUT=${1:-out/synth-layout}
AST=${2:-out/synth-ast}
[ -d "$LAYOUT/train" ] || build/tcost synth --out "$LAYOUT" --collection layout --seed 1
[ -d "$AST/train" ] || build/tcost synth --out "$AST" --collection ast --seed 1
mkdir -p out/models
row() {  # row MODEL DATA
  local m=$1 data=$2 t0 t1
  t0=$(date +%s)
  build/tcost train --data "$data" --model "$m" --out "out/models/$m.pt" --quiet
  t1=$(date +%s)
  build/tcost eval --model "out/models/$m.pt" --data "$data" --split test --json |
    python3 -c "import json,sys; j=json.load(sys.stdin); print(f\"| $m | $data | {j['mean_kendall_tau']:.3f} | {j['mean_opa']:.3f} | $((t1 - t0)) s |\")"
}
echo "| model | data | mean test Kendall tau | mean test OPA | training time |"
echo "|---|---|---|---|---|"
for m in gcn-baseline sage tgraph xgb; do row "$m" "$LAYOUT"; done
row ast-gcn "$AST"
# Both views of one collection side by side (ROOT/layout, ROOT/ast, as tcost collect writes
# them): the model that reads them together.
root=$(dirname "$LAYOUT")
if [ "$LAYOUT" = "$root/layout" ] && [ "$AST" = "$root/ast" ]; then row tgraph-ast "$root"; fi
