"""Scoring checkpoints on the test programs of the shipped data, as scripts/model-seeds.sh and
scripts/seed-ensembles.sh do: each model (or ensemble file) reads the view(s) it needs of every
test program; Kendall's tau-b and slowdown@k are tcost's own (the Python module).
Import with PYTHONPATH=build/python:scripts, or run it to print a table of checkpoints:
  PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/test_scores.py [--data DIR] \
      LABEL=CHECKPOINT[,CHECKPOINT...]...   (one row per label: its checkpoints pooled)
--data: another collection's test programs (default data/halide), e.g. a copy whose trees were
lowered again."""
import glob
import math
import os

import numpy as np
import tcost
from families import family  # noqa: F401 (scripts import it from here too)


def test_views(data="data/halide"):
    """The test programs' names, and their layout graphs and syntax trees in the same order."""
    names = [os.path.basename(f)[:-4] for f in sorted(glob.glob(f"{data}/layout/test/*.npz"))]
    load = lambda view: [tcost.load(f"{data}/{view}/test/{n}.npz") for n in names]
    return names, load("layout"), load("ast")


def score(path, views):
    """Per test program of views (test_views' result): (name, tau, slowdown@1, slowdown@5) of
    the checkpoint or ensemble file at path, slowdowns as ratios (1 = the best)."""
    model = tcost.Model(path, threads=1)
    out = []
    for name, g, a in zip(*views):
        cost = model.predict(g, ast=a)
        truth = g["config_runtime"]
        out.append((name, tcost.kendall_tau(cost, truth), 1 + tcost.slowdown(cost, truth, 1),
                    1 + tcost.slowdown(cost, truth, 5)))
    return out


def geomean(values):
    return math.exp(np.mean([math.log(v) for v in values]))


def row(label, paths, views):
    """A markdown row: checkpoints, mean test tau ± sd over them, geomean slowdown@1 and @5 over
    all of their test programs."""
    r = [score(p, views) for p in paths]
    taus = [np.mean([x[1] for x in per]) for per in r]
    geo = lambda k: geomean([x[k] for per in r for x in per])
    return (f"| {label} | {len(paths)} | {np.mean(taus):.3f} ± {np.std(taus):.3f} | "
            f"{geo(2):.2f}x | {geo(3):.2f}x |")


HEADER = ("| model | checkpoints | mean test tau ± sd | geomean slowdown@1 | slowdown@5 |\n"
          "|---|---|---|---|---|")

if __name__ == "__main__":
    # usage: PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/test_scores.py
    #            [--data DIR] LABEL=CHECKPOINT[,CHECKPOINT...]...   (one row per label)
    import sys
    args = sys.argv[1:]
    data = "data/halide"
    if args[:1] == ["--data"]:
        data, args = args[1], args[2:]
    views = test_views(data)
    print(HEADER)
    for arg in args:
        label, _, paths = arg.partition("=")
        print(row(label, paths.split(","), views))
