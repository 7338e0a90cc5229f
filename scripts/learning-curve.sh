#!/usr/bin/env bash
# Learning curves of ast-gcn on the shipped measured data: how its test tau grows with the number
# of training families and with the schedules per training program. Every training runs all
# its epochs and keeps the last (a data root without valid/, as the final fit does), so that no
# early stopping on the seven validation families blurs the curve:
# - f7, f14, f21: 7, 14 or 21 of the 28 training families (3 programs each), a shuffle per seed,
#   each subset inside the next;
# - f28: all 84 training programs; c25, c50, c100: those cut to 25, 50 or 100 schedules each
#   (`tcost train --train-configs`, drawn from the seed; 145 a program on average uncut);
# - f35: the final fit (`--include-valid`: the 21 validation programs too, 35 families);
# - p1, p2: all 28 families, 1 or 2 of each family's 3 programs (a shuffle per seed);
# - f14e160: f14 trained for 160 epochs, as many steps as f28's 80 (steps go by programs).
# Seeds 0-2, JOBS trainings at a time (--threads 1 each), a checkpoint with its .done marker is
# kept; then one row per point, scored on the fixed test split (scripts/test_scores.py).
# usage: [OUT=out/lc] [JOBS=2] scripts/learning-curve.sh   (after scripts/build.sh; ~45 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/lc}
JOBS=${JOBS:-2}
mkdir -p "$OUT"
PYTHONPATH=scripts /usr/bin/python3 - "$OUT" <<'EOF'
import os, random, sys
from families import family
out, src = sys.argv[1], os.path.abspath("data/halide/ast")
progs = sorted(os.listdir(f"{src}/train"))
families = sorted({family(p) for p in progs})
def root(name, keep):
    d = f"{out}/{name}/ast"
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(f"{d}/test"):
        os.symlink(f"{src}/test", f"{d}/test")
    if os.path.exists(f"{d}/train"):
        return
    os.makedirs(f"{d}/train")
    for p in progs:
        if family(p) in keep:
            os.symlink(f"{src}/train/{p}", f"{d}/train/{p}")
root("nv-all", set(families))
for seed in (0, 1, 2):
    order = families[:]
    random.Random(seed).shuffle(order)
    for n in (7, 14, 21):
        root(f"nv-s{seed}-f{n}", set(order[:n]))
    # p1, p2: each family's programs in a shuffled order, the first one or two kept
    rng = random.Random(100 + seed)
    ranked = {}
    for f in families:
        mine = [p for p in progs if family(p) == f]
        rng.shuffle(mine)
        for i, p in enumerate(mine):
            ranked[p] = i
    for k in (1, 2):
        d = f"{out}/nv-s{seed}-p{k}/ast"
        if not os.path.exists(f"{d}/train"):
            os.makedirs(f"{d}/train")
            for p in progs:
                if ranked[p] < k:
                    os.symlink(f"{src}/train/{p}", f"{d}/train/{p}")
        if not os.path.exists(f"{d}/test"):
            os.symlink(f"{src}/test", f"{d}/test")
EOF
jobs_file=$OUT/jobs.txt
: >"$jobs_file"
for s in 0 1 2; do
  for n in 7 14 21; do echo "nv-f$n-$s $OUT/nv-s$s-f$n/ast $s" >>"$jobs_file"; done
  echo "nv-f28-$s $OUT/nv-all/ast $s" >>"$jobs_file"
  for c in 25 50 100; do echo "nv-c$c-$s $OUT/nv-all/ast $s --train-configs $c" >>"$jobs_file"; done
  echo "nv-f35-$s data/halide/ast $s --include-valid" >>"$jobs_file"
  for k in 1 2; do echo "nv-p$k-$s $OUT/nv-s$s-p$k/ast $s" >>"$jobs_file"; done
  echo "nv-f14e160-$s $OUT/nv-s$s-f14/ast $s --epochs 160" >>"$jobs_file"
done
export OUT
# shellcheck disable=SC2016
xargs -P "$JOBS" -L 1 sh -c '
  pt=$OUT/$0.pt; data=$1; seed=$2; shift 2
  [ -f "$pt.done" ] && exit 0
  build/tcost train --data "$data" --model ast-gcn --seed "$seed" --out "$pt" --quiet --threads 1 "$@" >/dev/null
  touch "$pt.done"' <"$jobs_file"
rows=()
for p in f7 f14 f21 f14e160 p1 p2 c25 c50 c100 f28 f35; do
  rows+=("$p=$OUT/nv-$p-0.pt,$OUT/nv-$p-1.pt,$OUT/nv-$p-2.pt")
done
PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/test_scores.py "${rows[@]}"
