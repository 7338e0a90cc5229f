#!/usr/bin/env bash
# K-fold cross-validation over the families of data/halide, to choose options on more than the
# validation programs: all families are dealt into K folds (seeded by the first seed); for each
# fold, a model is trained on the other folds' programs (3 of their families, seeded, serve for
# early stopping) and scored on the fold's programs. Settings are NAME:VIEW:TRAIN-OPTIONS
# (VIEW: layout graphs, ast syntax trees, or both side by side for tgraph-ast); ensembles are NAME=MEMBER+MEMBER... of settings
# (`tcost ensemble`: standardised costs averaged; a member MEMBER*W has weight W, default 1),
# scored from both views. Every setting is
# trained once per seed; prints, per setting, the mean test Kendall tau over folds (mean ± sd
# over seeds), the per-fold means over seeds, and the geomean slowdown@1 and @5 over all
# programs of all folds (mean over seeds).
# usage: scripts/kfold.sh [K] [SEED...]   (after scripts/build.sh; about 12 minutes a seed)
# Per family: PYTHONPATH=build/python /usr/bin/python3 scripts/kfold-families.py OUT SETTING... (every family is tested once a seed).
# ("ast-gcn" and "tgraph-ast" train with the models' defaults, which changed: ast-gcn's loss
# hinge-gap since 2026-12-01 (mse before: ast-gcn-mse), its 80 epochs and peak learning rate
# 2e-3 since 2026-12-02 (40 epochs and 1e-3 before; ast-gcn-lr1e3 is 80 epochs at 1e-3),
# tgraph-ast's 80 epochs since 2026-12-02 (40 before: tgraph-ast-e40), and its peak learning
# rate 2e-3 and pooling by work, late on 2026-12-02 (tgraph-ast-lr1e3 trains the former
# defaults; tgraph-ast-e80 and tgraph-ast-lr2e3-work-pool now train the defaults), and ast-gcn's
# pooling by work since 2026-12-03 (ast-gcn-no-work-pool trains the former default,
# ast-gcn-work-pool now the default), and ast-gcn's passes down and up the trees since 2026-12-06
# (ast-gcn-no-tree-passes trains the former default, ast-gcn-tree-passes now the default), and
# tgraph-ast's passes since later that day (tgraph-ast-no-tree-passes trains the former default,
# tgraph-ast-tree-passes now the default), and both models' loss hinge-log since 2026-12-07
# (ast-gcn-hinge-gap and tgraph-ast-hinge-gap train the former default, the -hinge-log settings
# now the default).
# Since 2026-12-06 --threads 1 (which every training here runs with) holds OpenBLAS to one
# thread too (core/blas.h): results in a work directory from before then differ in their last
# digits from a run now, as another seed's would.
# Results of these settings in a work directory from before a change are the former defaults',
# so do not reuse them across one.)
# Environment: KFOLD_DATA, the dataset (default data/halide); KFOLD_OUT, the work directory
# (default out/kfold, emptied first); KFOLD_ONLY, a comma-separated list of the settings and
# ensembles to run (default all; an ensemble's members must be among them); KFOLD_JOBS, how many
# seeds run side by side (default 1: one after another); KFOLD_REUSE=1 keeps the work directory
# and skips every result already in it (an interrupted run resumes; settings can be added);
# KFOLD_TCOST, the tcost binary (default build/tcost; a copy lets the build go on meanwhile).
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-5}
shift || true
SEEDS=("$@")
[ ${#SEEDS[@]} -gt 0 ] || SEEDS=(0)
DATA=${KFOLD_DATA:-data/halide}
OUT=${KFOLD_OUT:-out/kfold}
TCOST=${KFOLD_TCOST:-build/tcost}
SETTINGS=(
  "tgraph:layout:--model tgraph"
  "tgraph-listmle:layout:--model tgraph --loss listmle"
  "tgraph-hinge-gap:layout:--model tgraph --loss hinge-gap"
  "tgraph-hinge-top:layout:--model tgraph --loss hinge-top"
  "tgraph-long:layout:--model tgraph --epochs 200 --patience 30"
  "tgraph-hidden64:layout:--model tgraph --hidden 64"
  "tgraph-no-attention:layout:--model tgraph --no-cross-attention"
  "tgraph-config-pool:layout:--model tgraph --config-pool"
  "sage:layout:--model sage"
  "gcn-baseline:layout:--model gcn-baseline"
  "xgb:layout:--model xgb"
  "xgb-ast:ast:--model xgb"
  "xgb-ast-e80:ast:--model xgb --epochs 80"
  "ast-gcn:ast:--model ast-gcn"
  "tgraph-ast:both:--model tgraph-ast"
  "tgraph-ast-hinge:both:--model tgraph-ast --loss hinge"
  "ast-gcn-pretrained:ast:--model ast-gcn --init out/pretrain/pre-ast-gcn.pt"
  "ast-gcn-mse:ast:--model ast-gcn --loss mse"
  "ast-gcn-hinge-gap:ast:--model ast-gcn --loss hinge-gap"
  "ast-gcn-hinge-top:ast:--model ast-gcn --loss hinge-top"
  "ast-gcn-no-tree-attention:ast:--model ast-gcn --no-tree-attention"
  "ast-gcn-listnet:ast:--model ast-gcn --loss listnet"
  "tgraph-ast-listnet:both:--model tgraph-ast --loss listnet"
  "ast-gcn-e80:ast:--model ast-gcn --epochs 80"
  "tgraph-ast-e80:both:--model tgraph-ast --epochs 80"
  "tgraph-ast-e40:both:--model tgraph-ast --epochs 40"
  "ast-gcn-lr2e3:ast:--model ast-gcn --lr 2e-3"
  "ast-gcn-lr1e3:ast:--model ast-gcn --lr 1e-3"
  "ast-gcn-work-pool:ast:--model ast-gcn --work-pool"
  "tgraph-ast-lr2e3:both:--model tgraph-ast --lr 2e-3"
  "tgraph-ast-lr2e3-work-pool:both:--model tgraph-ast --lr 2e-3 --work-pool"
  "tgraph-ast-lr1e3:both:--model tgraph-ast --lr 1e-3 --no-work-pool"
  "ast-gcn-no-work-pool:ast:--model ast-gcn --no-work-pool"
  "tgraph-ast-include-valid:both:--model tgraph-ast --include-valid"
  "ast-gcn-include-valid:ast:--model ast-gcn --include-valid"
  "tgraph-include-valid:layout:--model tgraph --include-valid"
  "tgraph-include-valid-e80:layout:--model tgraph --include-valid --epochs 80"
  "tgraph-e80:layout:--model tgraph --epochs 80"
  "tgraph-ast-include-valid-wu15:both:--model tgraph-ast --include-valid --warmup 0.15"
  "ast-gcn-include-valid-d01:ast:--model ast-gcn --include-valid --dropout 0.1"
  "ast-gcn-tree-passes:ast:--model ast-gcn --tree-passes"
  "ast-gcn-no-tree-passes:ast:--model ast-gcn --no-tree-passes"
  "ast-gcn-include-valid-tree-passes:ast:--model ast-gcn --include-valid --tree-passes"
  "tgraph-ast-tree-passes:both:--model tgraph-ast --tree-passes"
  "tgraph-ast-no-tree-passes:both:--model tgraph-ast --no-tree-passes"
  "ast-gcn-tree-pass-gru:ast:--model ast-gcn --tree-pass-cell gru"
  "ast-gcn-tree-pass-norm:ast:--model ast-gcn --tree-pass-cell norm"
  "ast-gcn-tree-pass-whole:ast:--model ast-gcn --tree-pass-whole"
  "ast-gcn-hinge-log:ast:--model ast-gcn --loss hinge-log"
  "ast-gcn-include-valid-hinge-log:ast:--model ast-gcn --include-valid --loss hinge-log"
  "tgraph-ast-include-valid-hinge-log:both:--model tgraph-ast --include-valid --loss hinge-log"
  "tgraph-ast-hinge-log:both:--model tgraph-ast --loss hinge-log"
  "tgraph-ast-hinge-gap:both:--model tgraph-ast --loss hinge-gap"
  "tgraph-ast-include-valid-hinge-gap:both:--model tgraph-ast --include-valid --loss hinge-gap"
  "ast-gcn-include-valid-hinge-gap:ast:--model ast-gcn --include-valid --loss hinge-gap"
  "ast-gcn-include-valid-hand:ast:--model ast-gcn --include-valid --hand-features"
)
ENSEMBLES=(
  "tgraph+xgb=tgraph+xgb"
  "tgraph+ast-gcn=tgraph+ast-gcn"
  "ast-gcn+xgb=ast-gcn+xgb"
  "tgraph+ast-gcn+xgb=tgraph+ast-gcn+xgb"
  "tgraph-listmle+ast-gcn+xgb=tgraph-listmle+ast-gcn+xgb"
  "tgraph+ast-gcn-w3=tgraph+ast-gcn*3"
  "tgraph+ast-gcn-pretrained-w3=tgraph+ast-gcn-pretrained*3"
  "tgraph-ast+xgb=tgraph-ast+xgb"
  "tgraph-ast+ast-gcn=tgraph-ast+ast-gcn"
  "ast-gcn-listnet+tgraph-ast-listnet=ast-gcn-listnet+tgraph-ast-listnet"
  "tgraph-ast+ast-gcn+both-listnet=tgraph-ast+ast-gcn+ast-gcn-listnet+tgraph-ast-listnet"
  "tgraph-ast+ast-gcn80=tgraph-ast+ast-gcn-e80"
  "tgraph-ast80+ast-gcn=tgraph-ast-e80+ast-gcn"
  "tgraph-ast80+ast-gcn-lr2e3=tgraph-ast-e80+ast-gcn-lr2e3"
  "tgraph-ast-lr2e3+ast-gcn=tgraph-ast-lr2e3+ast-gcn"
  "tgraph-ast-lr2e3-work-pool+ast-gcn=tgraph-ast-lr2e3-work-pool+ast-gcn"
  "tgraph-ast-include-valid+ast-gcn-include-valid=tgraph-ast-include-valid+ast-gcn-include-valid"
  "tgraph-ast-include-valid-wu15+ast-gcn-include-valid=tgraph-ast-include-valid-wu15+ast-gcn-include-valid"
  "ast-gcn-include-valid+xgb-ast=ast-gcn-include-valid+xgb-ast"
  "tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast=tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast"
  "tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast-w05=tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast*0.5"
  "tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast-w025=tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast*0.25"
  "tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast-w075=tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast*0.75"
  "tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast-e80-w05=tgraph-ast-include-valid+ast-gcn-include-valid+xgb-ast-e80*0.5"
  "tgraph-ast-include-valid+ast-gcn-include-valid-d01=tgraph-ast-include-valid+ast-gcn-include-valid-d01"
  "tgraph-ast-include-valid+ast-gcn-include-valid-d01+xgb-ast-w05=tgraph-ast-include-valid+ast-gcn-include-valid-d01+xgb-ast*0.5"
  "tgraph-ast+ast-gcn-tree-passes=tgraph-ast+ast-gcn-tree-passes"
  "tgraph-ast-tree-passes+ast-gcn-tree-passes=tgraph-ast-tree-passes+ast-gcn-tree-passes"
  "tgraph-ast-include-valid+ast-gcn-include-valid-hinge-log=tgraph-ast-include-valid+ast-gcn-include-valid-hinge-log"
  "tgraph-ast-include-valid-hinge-log+ast-gcn-include-valid-hinge-log=tgraph-ast-include-valid-hinge-log+ast-gcn-include-valid-hinge-log"
  "tgraph-ast-include-valid+ast-gcn-include-valid-hinge-log+xgb-ast-w05=tgraph-ast-include-valid+ast-gcn-include-valid-hinge-log+xgb-ast*0.5"
  "tgraph-ast-hinge-log+ast-gcn-hinge-log=tgraph-ast-hinge-log+ast-gcn-hinge-log"
)
if [ -n "${KFOLD_ONLY:-}" ]; then
  keep() { [[ ",$KFOLD_ONLY," == *",$1,"* ]]; }
  kept=()
  for s in "${SETTINGS[@]}"; do keep "${s%%:*}" && kept+=("$s"); done
  SETTINGS=("${kept[@]}")
  kept=()
  for e in "${ENSEMBLES[@]}"; do keep "${e%%=*}" && kept+=("$e"); done
  ENSEMBLES=("${kept[@]+"${kept[@]}"}")
fi
if [ -n "${KFOLD_REUSE:-}" ]; then
  mkdir -p "$OUT" && rm -rf "$OUT"/fold*  # the folds are dealt again, the same way
else
  rm -rf "$OUT" && mkdir -p "$OUT"
fi
# A setting that starts from a pretrained checkpoint (--init) needs scripts/pretrain.sh's.
if [[ " ${SETTINGS[*]} " == *"--init out/pretrain/"* ]]; then
  PRETRAIN_ONLY=1 bash scripts/pretrain.sh
fi
# Fold directories of symbolic links, both views side by side: fold f's test split is its
# families' programs (OUT/foldF/layout/SPLIT, OUT/foldF/ast/SPLIT).
PYTHONPATH=scripts python3 - "$OUT" "$K" "${SEEDS[0]}" "$DATA" <<'PY'
import glob, os, random, sys
from families import family
out, k, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
files = sorted(glob.glob(f"{sys.argv[4]}/layout/*/*.npz"))
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
        for view in ("layout", "ast"):
            src = f.replace("/layout/", f"/{view}/", 1)
            d = f"{out}/fold{i}/{view}/{split}"
            os.makedirs(d, exist_ok=True)
            os.symlink(os.path.abspath(src), f"{d}/{os.path.basename(f)}")
    print(f"fold {i}: test {', '.join(sorted(test))}; valid {', '.join(sorted(valid))}")
PY
run_seed() {
  local seed=$1 f s e name rest view data members parts m w
  for ((f = 0; f < K; f++)); do
    for s in "${SETTINGS[@]}"; do
      name=${s%%:*}
      rest=${s#*:}
      view=${rest%%:*}
      [ -n "${KFOLD_REUSE:-}" ] && [ -s "$OUT/$name-$f-$seed.json" ] && continue
      data="$OUT/fold$f/$view"
      [ "$view" = both ] && data="$OUT/fold$f"
      # shellcheck disable=SC2086
      "$TCOST" train --data "$data" ${rest#*:} --seed "$seed" \
        --out "$OUT/$name-$f-$seed.pt" --quiet --threads 1 >/dev/null
      "$TCOST" eval --model "$OUT/$name-$f-$seed.pt" --data "$OUT/fold$f" --split test \
        --json --threads 1 >"$OUT/$name-$f-$seed.json"
    done
    for e in "${ENSEMBLES[@]+"${ENSEMBLES[@]}"}"; do
      name=${e%%=*}
      [ -n "${KFOLD_REUSE:-}" ] && [ -s "$OUT/$name-$f-$seed.json" ] && continue
      members=()
      IFS=+ read -r -a parts <<<"${e#*=}"
      for m in "${parts[@]}"; do
        w=1
        [[ "$m" == *"*"* ]] && w=${m#*\*}
        members+=(--member "${m%\**}-$f-$seed.pt" --weight "$w")
      done
      "$TCOST" ensemble --out "$OUT/$name-$f-$seed.ens" "${members[@]}" >/dev/null
      "$TCOST" eval --model "$OUT/$name-$f-$seed.ens" --data "$OUT/fold$f" --split test \
        --json --threads 1 >"$OUT/$name-$f-$seed.json"
    done
    echo "seed $seed fold $f done" >&2
  done
}
# Seeds run one after another, or KFOLD_JOBS at a time (each process single-threaded).
# A seed that fails leaves its results missing, and the table below stops on them.
for seed in "${SEEDS[@]}"; do
  if [ "${KFOLD_JOBS:-1}" -gt 1 ]; then
    run_seed "$seed" &
    while [ "$(jobs -rp | wc -l)" -ge "$KFOLD_JOBS" ]; do wait -n || true; done
  else
    run_seed "$seed"
  fi
done
wait
names=()
for s in "${SETTINGS[@]}"; do names+=("${s%%:*}"); done
for e in "${ENSEMBLES[@]+"${ENSEMBLES[@]}"}"; do names+=("${e%%=*}"); done
python3 - "$OUT" "$K" "${#SEEDS[@]}" "${SEEDS[@]}" "${names[@]}" <<'PY'
import json, math, statistics, sys
out, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seeds, names = sys.argv[4:4 + n], sys.argv[4 + n:]
print(f"| setting | mean test tau over {k} folds (± sd over {n} seeds) | per fold (mean over seeds) "
      "| geomean slowdown@1 / @5 over all programs (mean over seeds) |")
print("|---|---|---|---|")


def geomean_slowdown(runs, key):  # runs: the eval JSON of each fold; slowdown is ratio - 1
    logs = [math.log1p(g[key]) for r in runs for g in r["per_graph"] if g.get(key) is not None]
    return math.exp(statistics.mean(logs))


for name in names:
    runs = [[json.load(open(f"{out}/{name}-{f}-{s}.json")) for f in range(k)] for s in seeds]
    t = [[r["mean_kendall_tau"] for r in x] for x in runs]
    per_seed = [statistics.mean(x) for x in t]
    sd = statistics.pstdev(per_seed) if n > 1 else 0.0
    folds = [statistics.mean(t[i][f] for i in range(n)) for f in range(k)]
    s1 = statistics.mean(geomean_slowdown(x, "slowdown_1") for x in runs)
    s5 = statistics.mean(geomean_slowdown(x, "slowdown_5") for x in runs)
    print(f"| {name} | {statistics.mean(per_seed):.3f} ± {sd:.3f} | "
          + " ".join(f"{x:.3f}" for x in folds) + f" | {s1:.2f}x / {s5:.2f}x |")
PY
