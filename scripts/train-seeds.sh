#!/usr/bin/env bash
# Trains MODEL on the shipped measured data with default options, one checkpoint per seed, at
# out/model-seeds/MODEL-SEED.pt (--threads 1), the data root chosen by what the model reads:
# layout graphs, the syntax trees for ast-gcn, both side by side for tgraph-ast. A checkpoint
# whose training ended (MODEL-SEED.pt.done, written when `tcost train` returns) is kept unless
# RETRAIN=1; one whose training was stopped (a checkpoint is written at each best epoch, so it
# may be there unfinished) continues from its resume state (--resume). Shared by
# scripts/model-seeds.sh and scripts/seed-ensembles.sh. MODEL-final (e.g. ast-gcn-final) is
# MODEL's final fit: trained with --include-valid (train/ and valid/ together, all epochs, the
# last kept). xgb-ast is XGBoost on the syntax trees' hand-crafted features (xgb trained on
# data/halide/ast). MODEL-gap (e.g. ast-gcn-final-gap) trains with --loss hinge-gap, the syntax-tree
# models' default loss until 2026-12-07 (hinge-log since; MODEL-hlog checkpoints of before then
# were trained with it explicitly: the defaults' checkpoints now). A last suffix -avgN (e.g.
# ast-gcn-final-avg20) trains with --average-last N: the mean of the last N epochs' weights.
# usage: scripts/train-seeds.sh MODEL SEED...   (after scripts/build.sh; TCOST= another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 MODEL SEED..." >&2; exit 2; }
m=$1
shift
OUT=out/model-seeds
mkdir -p "$OUT"
extra=()
base=$m
if [[ "$base" =~ ^(.*)-avg([0-9]+)$ ]]; then
  base=${BASH_REMATCH[1]}
  extra=(--average-last "${BASH_REMATCH[2]}")
fi
m_base=$base
base=${base%-gap}
[ "$base" != "$m_base" ] && extra+=(--loss hinge-gap)
final=$base
base=${base%-final}
[ "$base" != "$final" ] && extra+=(--include-valid)
[ "$base" = xgb-ast ] && base=xgb
data=data/halide/layout
[ "$base" = ast-gcn ] || [ "$m" = xgb-ast ] && data=data/halide/ast
[ "$base" = tgraph-ast ] && data=data/halide  # both views side by side
for s in "$@"; do
  pt=$OUT/$m-$s.pt
  [ -z "${RETRAIN:-}" ] && [ -f "$pt.done" ] && continue
  resume=()
  [ -z "${RETRAIN:-}" ] && [ -f "$pt.resume" ] && resume=(--resume)
  rm -f "$pt.done"
  "${TCOST:-build/tcost}" train --data "$data" --model "$base" "${extra[@]+"${extra[@]}"}" --seed "$s" \
    --out "$pt" --quiet --threads 1 "${resume[@]+"${resume[@]}"}" >/dev/null
  touch "$pt.done"
done
