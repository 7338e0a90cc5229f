#!/usr/bin/env bash
# K-fold cross-validation over the families of data/halide (layout graphs), to choose options
# on more than the validation programs: all families are dealt into K folds (seeded); for
# each fold, a model is trained on the other folds' programs (3 of their families, seeded,
# serve for early stopping) and scored on the fold's programs. Prints, per setting, the mean
# test Kendall tau over folds ± sd over folds. Settings are NAME:TRAIN-OPTIONS pairs.
# usage: scripts/kfold.sh [K] [SEED]   (after scripts/build.sh; about 10 minutes with 5 folds)
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-5}
SEED=${2:-0}
OUT=out/kfold
SETTINGS=(
  "tgraph:--model tgraph"
  "tgraph-listmle:--model tgraph --loss listmle"
  "tgraph-hidden64:--model tgraph --hidden 64"
  "tgraph-no-attention:--model tgraph --no-cross-attention"
  "tgraph-3-layers:--model tgraph --layers 3"
  "sage:--model sage"
  "gcn-baseline:--model gcn-baseline"
  "xgb:--model xgb"
)
rm -rf "$OUT" && mkdir -p "$OUT"
# Fold directories of symbolic links: fold f's test split is its families' programs.
python3 - "$OUT" "$K" "$SEED" <<'PY'
import glob, os, random, re, sys
out, k, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
files = sorted(glob.glob("data/halide/layout/*/*.npz"))
family = lambda f: re.sub(r"_[0-9][0-9x]*$", "", os.path.basename(f)[:-4])
fams = sorted({family(f) for f in files})
rng = random.Random(seed)
rng.shuffle(fams)
folds = [fams[i::k] for i in range(k)]
for i, test in enumerate(folds):
    rest = [f for f in fams if f not in test]
    valid = rng.sample(rest, 3)
    for f in files:
        fam = family(f)
        split = "test" if fam in test else "valid" if fam in valid else "train"
        d = f"{out}/fold{i}/{split}"
        os.makedirs(d, exist_ok=True)
        os.symlink(os.path.abspath(f), f"{d}/{os.path.basename(f)}")
    print(f"fold {i}: test {', '.join(sorted(test))}; valid {', '.join(sorted(valid))}")
PY
for ((f = 0; f < K; f++)); do
  for s in "${SETTINGS[@]}"; do
    name=${s%%:*}
    # shellcheck disable=SC2086
    build/tcost train --data "$OUT/fold$f" ${s#*:} --seed "$SEED" --out "$OUT/$name-$f.pt" \
      --quiet --threads 1 >/dev/null
    build/tcost eval --model "$OUT/$name-$f.pt" --data "$OUT/fold$f" --split test --json \
      --threads 1 >"$OUT/$name-$f.json"
  done
  echo "fold $f done" >&2
done
python3 - "$OUT" "$K" "${SETTINGS[@]}" <<'PY'
import json, statistics, sys
out, k, settings = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"| setting | mean test tau over {k} folds ± sd over folds | per fold |")
print("|---|---|---|")
for s in settings:
    name = s.split(":")[0]
    t = [json.load(open(f"{out}/{name}-{f}.json"))["mean_kendall_tau"] for f in range(k)]
    print(f"| {name} | {statistics.mean(t):.3f} ± {statistics.pstdev(t):.3f} | "
          + " ".join(f"{x:.3f}" for x in t) + " |")
PY
