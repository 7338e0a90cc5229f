#!/usr/bin/env bash
# Tuning with a model that reads syntax trees (two stages: the shipped layout model ranks every
# candidate, the syntax-tree model re-ranks the best --rerank of them, lowered) beside tuning
# with the shipped layout model alone, on the tuning table's programs (one of each test family),
# the same budget (64 measurements, 5 minutes per program), the default schedule and Adams2019
# measured in the same run. Writes out/bench/two-stage-PROGRAM*.json; prints the table
# (tcost: the layout model alone; tcost-trees: the two stages). Run scripts/build.sh first.
# usage: scripts/tune-two-stage.sh TREE_CHECKPOINT [PROGRAM...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 TREE_CHECKPOINT [PROGRAM...]" >&2; exit 2; }
TREES=$1
shift
LAYOUT=models/tgraph-halide.pt
PROGRAMS=("$@")
[ ${#PROGRAMS[@]} -gt 0 ] || PROGRAMS=(attention_8x64x64 conv1x1_28x64x128 morph_close_1536x1024
  resnet_bottleneck_28x128x32 sobel_1536x1024)
mkdir -p out/bench
pairs=()
for p in "${PROGRAMS[@]}"; do
  o=out/bench/two-stage-$p
  rm -f "$o"-*.jsonl*
  build/tcost tune --program "$p" --model "$LAYOUT" --budget 64 --time-budget 5 \
    --compare default,adams2019 --log "$o-layout.jsonl" --json >"$o-layout.json"
  build/tcost tune --program "$p" --model "$TREES" --prerank "$LAYOUT" --budget 64 \
    --time-budget 5 --log "$o-trees.jsonl" --json >"$o-trees.json"
  # One comparison: the first run's methods, then the two-stage search as tcost-trees.
  /usr/bin/python3 - "$o-layout.json" "$o-trees.json" "$o.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
t = dict(b["programs"][0]["methods"][-1], method="tcost-trees")
a["programs"][0]["methods"].append(t)
json.dump(a, open(sys.argv[3], "w"))
PY
  pairs+=("$p=$o.json")
  echo "$p done"
done
/usr/bin/python3 scripts/tune-table.py program "${pairs[@]}"
