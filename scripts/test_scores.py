"""Scoring checkpoints on the test programs of the shipped data, as scripts/model-seeds.sh and
scripts/seed-ensembles.sh do: each model (or ensemble file) reads the view(s) it needs of every
test program; Kendall's tau-b and slowdown@k are tcost's own (the Python module).
Import with PYTHONPATH=build/python:scripts."""
import glob
import math
import os
import re

import numpy as np
import tcost


def family(name):
    """A program's family: its name without the trailing size (conv1x1_28x64x128 -> conv1x1)."""
    return re.sub(r"_[0-9][0-9x]*$", "", name)


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
