#!/usr/bin/env bash
# Pretraining on synthetic data, then fine-tuning on the measured data, against training on the
# measured data alone (the data-quality issue's "what the field does"). For tgraph (layout
# graphs) and ast-gcn (syntax trees): a model is trained on a synthetic dataset of the same
# view (`tcost synth`, generator GEN), then `tcost train --init` fine-tunes it on data/halide
# with each seed, next to a model trained from scratch with the same seed and options. Prints
# the mean test Kendall tau (± sd over seeds) of both on the test programs of data/halide.
# usage: scripts/pretrain.sh [SEED...]   (after scripts/build.sh; GEN=standard by default)
# PRETRAIN_ONLY=1 makes the two pretrained checkpoints (out/pretrain/pre-MODEL.pt) and stops
# (scripts/kfold.sh uses them).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=("$@")
[ ${#SEEDS[@]} -gt 0 ] || SEEDS=(0 1 2)
GEN=${GEN:-standard}
OUT=out/pretrain
mkdir -p "$OUT"
for view in layout ast; do
  model=tgraph
  [ "$view" = ast ] && model=ast-gcn
  if [ ! -d "$OUT/synth-$view" ]; then
    build/tcost synth --out "$OUT/synth-$view" --collection "$view" --generator "$GEN" \
      --graphs 120 --configs 100 --seed 0 >/dev/null
  fi
  [ -f "$OUT/pre-$model.pt" ] ||
    build/tcost train --data "$OUT/synth-$view" --model "$model" --out "$OUT/pre-$model.pt" \
      --quiet --threads 1 >/dev/null
  [ -n "${PRETRAIN_ONLY:-}" ] && continue
  for s in "${SEEDS[@]}"; do
    for start in scratch pretrained; do
      init=()
      [ "$start" = pretrained ] && init=(--init "$OUT/pre-$model.pt")
      build/tcost train --data "data/halide/$view" --model "$model" --seed "$s" \
        --out "$OUT/$model-$start-$s.pt" "${init[@]}" --quiet --threads 1 >/dev/null
      build/tcost eval --model "$OUT/$model-$start-$s.pt" --data "data/halide/$view" \
        --split test --json --threads 1 >"$OUT/$model-$start-$s.json"
    done
  done
done
[ -n "${PRETRAIN_ONLY:-}" ] && exit 0
python3 - "$OUT" "${SEEDS[@]}" <<'PY'
import json, statistics, sys
out, seeds = sys.argv[1], sys.argv[2:]
print(f"Mean test Kendall tau ± sd over seeds {', '.join(seeds)}.")
print()
print("| model | from scratch | pretrained on synthetic data, then fine-tuned |")
print("|---|---|---|")
for model in ("tgraph", "ast-gcn"):
    cells = []
    for start in ("scratch", "pretrained"):
        t = [json.load(open(f"{out}/{model}-{start}-{s}.json"))["mean_kendall_tau"] for s in seeds]
        sd = statistics.pstdev(t) if len(t) > 1 else 0.0
        cells.append(f"{statistics.mean(t):.3f} ± {sd:.3f}")
    print(f"| {model} | {cells[0]} | {cells[1]} |")
PY
