#!/usr/bin/env python3
"""Would fewer passes do when a schedule's first measurements agree? Reads a collection whose
schedules were measured in K >= 4 passes in two sessions (the first collection and a later
`tcost collect --cross-session N --passes K --session NAME` run, as data/studies/cross holds)
and compares, on each side alike: always the best of k passes (k = 1..4), stopping once the
two best so far agree within R (from two passes, at most four), and other statistics over four
passes. Prints the mean Kendall tau per program between the sessions, the p90/p10 of new/old
runtimes, and the passes measured per schedule. Kendall's tau-b is tcost's own.
usage: PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/early-stop.py DATA_DIR SESSION"""
import collections
import math
import statistics
import sys

from measurement_log import load_records, passes, quantile
from tcost import kendall_tau


def pairs(data, session):
    """instance -> [(first session's 4 passes, later session's 4 passes)]."""
    recs = load_records(data)
    prefix = f"session|{session}|"
    progs = collections.defaultdict(list)
    for key, r in recs.items():
        first = key[len(prefix):]
        if not key.startswith(prefix) or not r.get("ok") or not recs.get(first, {}).get("ok"):
            continue
        old, new = passes(recs, first, r["target"]), passes(recs, key, r["target"])
        if len(old) >= 4 and len(new) >= 4:
            progs[r["instance"]].append((old[:4], new[:4]))
    return {p: v for p, v in progs.items() if len(v) >= 2}


def settled(v, within):
    """The best of the passes measured until the best two agree within WITHIN (from two, at
    most four), and how many were measured."""
    for k in range(2, 5):
        s = sorted(v[:k])
        if s[1] / s[0] <= 1 + within or k == 4:
            return s[0], k
    raise AssertionError


def row(progs, name, f):
    taus, ratios, cost = [], [], []
    for v in progs.values():
        a, b = [f(o) for o, _ in v], [f(n) for _, n in v]
        taus.append(kendall_tau([x for x, _ in a], [x for x, _ in b]))
        ratios += [y[0] / x[0] for x, y in zip(a, b)]
        cost += [x[1] for x in a + b]
    spread = quantile(ratios, .9) / quantile(ratios, .1)
    print(f"| {name} | {statistics.mean(taus):.3f} | {spread:.3f} | "
          f"{statistics.mean(cost):.2f} |")


def main():
    data, session = sys.argv[1], sys.argv[2]
    progs = pairs(data, session)
    print(f"## {data}: {sum(len(v) for v in progs.values())} schedules of {len(progs)} "
          f"programs, four passes in each session")
    print("| statistic on each side | mean tau | new/old p90/p10 | passes per schedule |")
    print("|---|---|---|---|")
    for k in range(1, 5):
        row(progs, f"best of {k}", lambda v, k=k: (min(v[:k]), k))
    for within in (0.005, 0.01, 0.02, 0.05, 0.1):
        row(progs, f"best, stopping when two agree within {within:.1%}",
            lambda v, w=within: settled(v, w))
    for name, f in [("second best of 4", lambda v: sorted(v)[1]),
                    ("geometric mean of the best two of 4",
                     lambda v: math.sqrt(sorted(v)[0] * sorted(v)[1])),
                    ("median of 4", statistics.median)]:
        row(progs, name, lambda v, f=f: (f(v), 4))


main()
