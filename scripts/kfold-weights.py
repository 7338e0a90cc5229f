#!/usr/bin/env python3
"""Ensemble weights chosen by k-fold cross-validation over families (after scripts/kfold.sh).

Each fold's tgraph, ast-gcn and xgb checkpoints score the fold's programs; their costs are
standardised per program and averaged with each weight triple of a grid, as `tcost ensemble`
does. Prints the mean over folds of the fold's mean Kendall tau (mean ± sd over seeds), over
all families and over the families outside the fixed test set (the choice is made on those,
so the test programs stay unseen by it).
usage: PYTHONPATH=build/python /usr/bin/python3 scripts/kfold-weights.py [DIR:SEED...]
(default out/kfold with the seeds whose checkpoints it holds). Needs numpy.
"""
import glob, os, re, sys
import numpy as np
import tcost
from families import family, test_families
if len(sys.argv) > 1:
    dirs = {a.rsplit(":", 1)[1]: a.rsplit(":", 1)[0] for a in sys.argv[1:]}
else:
    found = sorted({re.sub(r".*-", "", p[:-3]) for p in glob.glob("out/kfold/tgraph-0-*.pt")})
    dirs = {s: "out/kfold" for s in found}
seeds = list(dirs)
TEST = test_families()
grid = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 2, 0), (1, 3, 0), (1, 4, 0), (2, 1, 0),
        (1, 1, 1), (1, 2, 1), (1, 3, 1), (0, 2, 1), (0, 3, 1), (1, 4, 1), (2, 4, 1)]
z = lambda v: (v - v.mean()) / (v.std() if v.std() > 0 else 1)
res = {w: {"all": [], "nontest": []} for w in grid}
for s in seeds:
    d = dirs[s]
    for f in range(5):
        models = {m: tcost.Model(f"{d}/{m}-{f}-{s}.pt", threads=1) for m in ("tgraph", "ast-gcn", "xgb")}
        per = {w: {"all": [], "nontest": []} for w in grid}
        for path in sorted(glob.glob(f"{d}/fold{f}/layout/test/*.npz")):
            name = os.path.basename(path)[:-4]
            g = tcost.load(path)
            a = tcost.load(path.replace("/layout/", "/ast/"))
            zs = [z(np.asarray(models["tgraph"].predict(g))), z(np.asarray(models["ast-gcn"].predict(a))),
                  z(np.asarray(models["xgb"].predict(g)))]
            truth = g["config_runtime"]
            for w in grid:
                c = sum(wi * zi for wi, zi in zip(w, zs))
                t = tcost.kendall_tau(c, truth)
                per[w]["all"].append(t)
                if family(name) not in TEST:
                    per[w]["nontest"].append(t)
        for w in grid:
            for k in ("all", "nontest"):
                res[w][k].append((s, np.mean(per[w][k])))
print(f"seeds {seeds}; mean over folds of the fold's mean tau, mean over seeds")
print("| weights tgraph:ast-gcn:xgb | all families | non-test families |")
print("|---|---|---|")
for w in grid:
    cells = []
    for k in ("all", "nontest"):
        by_seed = [np.mean([v for (ss, v) in res[w][k] if ss == s]) for s in seeds]
        cells.append(f"{np.mean(by_seed):.3f} ± {np.std(by_seed):.3f}")
    print(f"| {w[0]}:{w[1]}:{w[2]} | {cells[0]} | {cells[1]} |")
