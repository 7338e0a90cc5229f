"""How much of a model's first-pick loss on the test programs the measurements explain: for each
test program of data/halide, the model's first pick (its lowest predicted cost) against the
best schedule, with each schedule's runtime taken from its passes (the shipped collection
measures each schedule in four separate processes) by four statistics: the minimum (the shipped
runtimes), the median, the second-best pass and the geometric mean. If a first pick were lost
to a process that happened to run the best schedule fast, the other statistics would forgive
it. Schedules are matched to the passes by their shipped runtime (the minimum of their passes);
each program prints how many matched.
  PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/first-picks.py CHECKPOINT_OR_ENSEMBLE"""
import math
import sys

import numpy as np
import tcost
from measurement_log import load_records, pass_records
from test_scores import geomean, test_views

STATISTICS = {
    "minimum": lambda b: b[0],
    "median": lambda b: float(np.median(b)),
    "second-best": lambda b: b[1],
    "geometric mean": lambda b: math.exp(np.mean(np.log(b))),
}


def passes_by_runtime(recs):
    """{program: {shipped runtime: sorted best_ns of the passes}} of every schedule measured
    at least twice (first records only, not a later session's)."""
    out = {}
    for key, r in recs.items():
        if key.startswith(("repeat|", "session|")):
            continue
        best = sorted(p["best_ns"] for p in pass_records(recs, key) if p.get("ok"))
        if len(best) >= 2:
            out.setdefault(r["instance"], {}).setdefault(best[0], best)
    return out


def main(path):
    by_program = passes_by_runtime(load_records("data/halide"))
    model = tcost.Model(path, threads=1)
    ratios = {name: [] for name in STATISTICS}
    for name, g, a in zip(*test_views()):
        truth = np.asarray(g["config_runtime"], dtype=float)
        passes = by_program[name]
        kept = [i for i, t in enumerate(truth) if t in passes]
        cost = np.asarray(model.predict(g, ast=a))[kept]
        pick = int(np.argmin(cost))
        cells = []
        for stat, f in STATISTICS.items():
            y = np.array([f(passes[truth[i]]) for i in kept])
            ratios[stat].append(y[pick] / y.min())
            cells.append(f"{stat} {ratios[stat][-1]:.2f}x")
        print(f"{name}: {len(kept)} of {len(truth)} matched; first pick " + ", ".join(cells))
    print("geomean slowdown@1: " + ", ".join(f"{s} {geomean(v):.2f}x" for s, v in ratios.items()))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
