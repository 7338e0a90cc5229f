#!/usr/bin/env python3
"""What the M-th measurement of a re-measurement round (tcost collect --recorded --passes M) added:
reads a collection's measurements.jsonl and manifest.json and, for every schedule with at least M
ok measurements under the manifest's Halide target, compares the best of its first M-1 with the
best of its first M, and its M-th measurement alone with the best of the first M-1. Kendall's
tau-b is tcost's own (the Python module), the metric behind the manifest's figures.
usage: PYTHONPATH=build/python /usr/bin/python3 scripts/round-stats.py DATA_DIR [M]"""
import collections
import json
import statistics
import sys

from measurement_log import load_records, passes, quantile
from tcost import kendall_tau


def main(data, m):
    target = json.load(open(f"{data}/manifest.json"))["halide"]["target"]
    recs = load_records(data)

    programs = collections.defaultdict(list)  # instance -> [first M passes]
    for key, r in recs.items():
        if key.startswith(("repeat|", "session|", "remeasure|")):
            continue
        p = passes(recs, key, target)
        if len(p) >= m:
            programs[r["instance"]].append(p[:m])
    programs = {k: v for k, v in programs.items() if len(v) >= 2}
    rows = [p for v in programs.values() for p in v]
    if not rows:
        sys.exit(f"no schedule has {m} ok measurements under {target}")
    new_best = sum(p[-1] < min(p[:-1]) for p in rows) / len(rows)
    ratio = [min(p) / min(p[:-1]) for p in rows]
    tau_best = [kendall_tau([min(p[:-1]) for p in v], [min(p) for p in v])
                for v in programs.values()]
    tau_alone = [kendall_tau([min(p[:-1]) for p in v], [p[-1] for p in v])
                 for v in programs.values()]
    print(f"{len(rows)} schedules of {len(programs)} programs with {m} measurements under the target")
    print(f"measurement {m} the new best: {new_best:.1%} (1/{m} = {1 / m:.1%} if the passes were alike)")
    print(f"best of {m} / best of {m - 1}: p10 {quantile(ratio, 0.1):.3f}, "
          f"median {statistics.median(ratio):.3f}")
    print(f"mean tau over programs, best of {m - 1} against best of {m}: "
          f"{statistics.mean(tau_best):.3f}")
    print(f"mean tau over programs, measurement {m} alone against the best of {m - 1}: "
          f"{statistics.mean(tau_alone):.3f}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 3)
