#!/usr/bin/env python3
"""Where a model's ranking errors lie: the test programs' schedule pairs bucketed by how far
apart their measured runtimes are (|log t_i - log t_j|), and per bucket the share of pairs the
model orders the wrong way round and that bucket's share of all wrongly ordered pairs. Pairs a
few percent apart are within the measurement noise (single schedules move by 15-30% across
sessions, README "Shipped dataset"); pairs a factor of 1.2-2 apart are not, so what the model
gets wrong there is the model's.
usage: PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/discordance.py CHECKPOINT...
       (checkpoints or ensemble files; their pairs pooled)"""
import sys

import numpy as np
import tcost
import test_scores

EDGES = [0, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0, np.inf]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    views = test_scores.test_views()
    total = np.zeros(len(EDGES) - 1)
    wrong = np.zeros(len(EDGES) - 1)
    for path in sys.argv[1:]:
        model = tcost.Model(path, threads=1)
        for _, g, a in zip(*views):
            cost = np.asarray(model.predict(g, ast=a), dtype=float)
            t = np.log(np.asarray(g["config_runtime"], dtype=float))
            i, j = np.triu_indices(len(t), 1)
            gap = np.abs(t[i] - t[j])
            bad = (t[i] - t[j]) * (cost[i] - cost[j]) < 0
            bucket = np.digitize(gap, EDGES) - 1
            total += np.bincount(bucket, minlength=len(total))
            wrong += np.bincount(bucket, weights=bad, minlength=len(total))
    print("| runtimes apart (|log ratio|) | pairs (share) | ordered wrong | share of all wrong |")
    print("|---|---|---|---|")
    for k in range(len(total)):
        hi = "" if np.isinf(EDGES[k + 1]) else f"{EDGES[k + 1]:.2f}"
        print(f"| {EDGES[k]:.2f}-{hi} | {int(total[k])} ({total[k] / total.sum():.2f}) | "
              f"{wrong[k] / max(total[k], 1):.3f} | {wrong[k] / wrong.sum():.2f} |")
    print(f"all pairs: {int(total.sum())}, ordered wrong {wrong.sum() / total.sum():.3f}")


if __name__ == "__main__":
    main()
