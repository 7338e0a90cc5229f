#!/usr/bin/env python3
"""The pair's weights chosen by k-fold cross-validation over families (after scripts/kfold.sh has
trained the final fits of both syntax-tree models, as the pair's k-fold rows do).

Each fold's tgraph-ast and ast-gcn final fits (`tgraph-ast-include-valid-F-S.pt`,
`ast-gcn-include-valid-F-S.pt`) score the fold's held-out programs; their costs are standardised
per program and averaged with each weight pair of a grid, as `tcost ensemble --weight` does.
Prints, per weight pair, the mean over folds of the fold's mean Kendall tau and geomean
slowdown@1 (mean ± sd over seeds), over all families and over the families outside the fixed
test set (a choice is made on those, so that the test programs stay unseen by it).
usage: PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/kfold-pair-weights.py DIR:SEED...
"""
import glob
import math
import os
import sys

import numpy as np
import tcost
from families import family, test_families

TEST = test_families()
GRID = [(1, 0), (0, 1), (1, 1), (1, 2), (2, 3), (3, 2), (2, 1), (1, 3)]


def z(v):
    return (v - v.mean()) / (v.std() if v.std() > 0 else 1)


def main(args):
    if not args:
        sys.exit(__doc__)
    # weights -> scope -> per seed: [fold means of (tau, log slowdown@1)]
    res = {w: {"all": {}, "nontest": {}} for w in GRID}
    for arg in args:
        d, seed = arg.rsplit(":", 1)
        for f in range(5):
            pair = [tcost.Model(f"{d}/{m}-include-valid-{f}-{seed}.pt", threads=1)
                    for m in ("tgraph-ast", "ast-gcn")]
            per = {w: {"all": [], "nontest": []} for w in GRID}
            for path in sorted(glob.glob(f"{d}/fold{f}/layout/test/*.npz")):
                name = os.path.basename(path)[:-4]
                g = tcost.load(path)
                a = tcost.load(path.replace("/layout/", "/ast/"))
                zs = [z(np.asarray(m.predict(g, ast=a), dtype=np.float64)) for m in pair]
                truth = np.asarray(g["config_runtime"], dtype=np.float64)
                for w in GRID:
                    cost = w[0] * zs[0] + w[1] * zs[1]
                    x = (tcost.kendall_tau(cost, truth),
                         math.log(1 + tcost.slowdown(cost, truth, 1)))
                    per[w]["all"].append(x)
                    if family(name) not in TEST:
                        per[w]["nontest"].append(x)
            for w in GRID:
                for scope, xs in per[w].items():
                    if xs:
                        res[w][scope].setdefault(seed, []).append(np.mean(xs, axis=0))
    print("| weights tgraph-ast:ast-gcn | all families: tau | slowdown@1 | "
          "non-test families: tau | slowdown@1 |")
    print("|---|---|---|---|---|")
    for w in GRID:
        cells = []
        for scope in ("all", "nontest"):
            per_seed = [np.mean(v, axis=0) for v in res[w][scope].values()]
            taus = [p[0] for p in per_seed]
            s1 = math.exp(np.mean([p[1] for p in per_seed]))
            cells.append(f"{np.mean(taus):.3f} ± {np.std(taus):.3f} | {s1:.2f}x")
        print(f"| {w[0]}:{w[1]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
