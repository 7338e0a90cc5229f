"""Pooled ensembles over the k-fold study's checkpoints, and a pessimistic pick.

scripts/kfold.sh trains every setting once per fold and seed and scores ensembles of one
seed's members. This pools instead: for each fold, every listed model's checkpoints of all
seeds (KFOLD_OUT/MODEL-FOLD-SEED.pt) score the fold's test programs, each member's costs are
standardised per program, and a program's cost is their mean plus LAMBDA times their standard
deviation across members (LAMBDA > 0 is a pessimistic pick: a configuration the members
disagree on ranks lower, as in a lower confidence bound). Prints, per pool and LAMBDA, the mean
test Kendall tau over all programs of all folds and the geomean slowdown@1 and @5 (tcost's
metrics, the Python module).

usage: PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/kfold-pooled.py \
           [--out out/kfold-ast12] [--folds 5] [--seeds 0,1,2] [--lambdas 0,0.5,1] [--combine z|rank] \
           POOL...   (POOL: MODEL[*WEIGHT][+MODEL[*WEIGHT]...], settings of scripts/kfold.sh;
                      a weight scales that model's standardised costs, as in tcost ensemble)
"""
import argparse
import glob
import math
import os

import numpy as np
import tcost


def standardised(cost):
    c = np.asarray(cost, dtype=float)
    return (c - c.mean()) / (c.std() + 1e-12)


def member(spec):
    """MODEL or MODEL*WEIGHT -> (MODEL, weight)."""
    name, _, weight = spec.partition("*")
    return name, float(weight) if weight else 1.0


def fold_programs(out, fold):
    """The fold's test programs: (name, layout graph, syntax trees)."""
    files = sorted(glob.glob(f"{out}/fold{fold}/layout/test/*.npz"))
    return [(os.path.basename(f)[:-4], tcost.load(f), tcost.load(f.replace("/layout/", "/ast/")))
            for f in files]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/kfold-ast12")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--lambdas", default="0,0.5,1")
    ap.add_argument("--combine", choices=["z", "rank"], default="z",
                    help="members' costs standardised (z, as tcost ensemble) or their ranks")
    ap.add_argument("pools", nargs="+")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    lambdas = [float(x) for x in a.lambdas.split(",")]
    models = sorted({member(m)[0] for pool in a.pools for m in pool.split("+")})
    # costs[(fold, program)][model] = one standardised cost vector per seed
    costs, truth = {}, {}
    for f in range(a.folds):
        programs = fold_programs(a.out, f)
        for m in models:
            for s in seeds:
                path = f"{a.out}/{m}-{f}-{s}.pt"
                if not os.path.exists(path):
                    raise SystemExit(f"kfold-pooled: {path} missing (run scripts/kfold.sh)")
                model = tcost.Model(path, threads=2)
                for name, g, t in programs:
                    truth[(f, name)] = g["config_runtime"]
                    cost = np.asarray(model.predict(g, ast=t), dtype=float)
                    if a.combine == "rank":
                        cost = np.argsort(np.argsort(cost, kind="stable")).astype(float)
                    costs.setdefault((f, name), {}).setdefault(m, []).append(standardised(cost))
    print(f"| pool ({len(seeds)} seeds of each model) | lambda | mean test tau | "
          "geomean slowdown@1 | slowdown@5 |")
    print("|---|---|---|---|---|")
    for pool in a.pools:
        pairs = [member(m) for m in pool.split("+")]
        for lam in lambdas:
            taus, s1, s5 = [], [], []
            for key, per_model in costs.items():
                z = np.array([c for m, _ in pairs for c in per_model[m]])
                w = np.array([wm for m, wm in pairs for _ in per_model[m]])
                mean = (w[:, None] * z).sum(0) / w.sum()
                cost = mean + lam * np.sqrt((w[:, None] * (z - mean) ** 2).sum(0) / w.sum())
                t = truth[key]
                taus.append(tcost.kendall_tau(cost, t))
                s1.append(math.log(1 + tcost.slowdown(cost, t, 1)))
                s5.append(math.log(1 + tcost.slowdown(cost, t, 5)))
            print(f"| {pool} | {lam:g} | {np.mean(taus):.3f} | {math.exp(np.mean(s1)):.2f}x | "
                  f"{math.exp(np.mean(s5)):.2f}x |")


if __name__ == "__main__":
    main()
