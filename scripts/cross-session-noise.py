#!/usr/bin/env python3
"""Where the measurement noise is: reads a collection's measurements.jsonl and, for the schedules
of one cross-session run (tcost collect --cross-session N --passes 2 --session NAME), compares
single measurements and bests of two, across the sessions and within the later run, and the
tau by the programs' runtime and spread. Kendall's tau-b is tcost's own (the Python module), the
metric behind the manifest's figure.
usage: PYTHONPATH=build/python /usr/bin/python3 scripts/cross-session-noise.py DATA_DIR SESSION"""
import collections
import statistics
import sys

from measurement_log import load_records, passes, quantile
from tcost import kendall_tau


def main(data, session):
    recs = load_records(data)
    prefix = f"session|{session}|"

    programs = collections.defaultdict(list)  # instance -> [(old passes, new passes, family)]
    for key, r in recs.items():
        if not key.startswith(prefix) or not r.get("ok"):
            continue
        first = key[len(prefix):]
        if first not in recs or not recs[first].get("ok"):
            continue
        old, new = passes(recs, first, r["target"]), passes(recs, key, r["target"])
        if old and len(new) >= 2:
            programs[r["instance"]].append((old, new, r["family"]))
    programs = {p: v for p, v in programs.items() if len(v) >= 2}
    sides = {
        "one measurement against one, across sessions": (lambda o, n: o[-1], lambda o, n: n[0]),
        "one against one, within the later run (its pass 1 against its pass 2)":
            (lambda o, n: n[0], lambda o, n: n[1]),
        "shipped (best of all earlier passes) against one measurement":
            (lambda o, n: min(o), lambda o, n: n[0]),
        "shipped against the later run's best, across sessions":
            (lambda o, n: min(o), lambda o, n: min(n)),
    }
    print(f"{sum(len(v) for v in programs.values())} schedules of {len(programs)} programs")
    print("| comparison | mean tau over programs | new/old p10 | p50 | p90 | p90/p10 |")
    print("|---|---|---|---|---|---|")
    for name, (a, b) in sides.items():
        taus = [kendall_tau([a(o, n) for o, n, _ in v], [b(o, n) for o, n, _ in v])
                for v in programs.values()]
        r = [b(o, n) / a(o, n) for v in programs.values() for o, n, _ in v]
        print(f"| {name} | {statistics.mean(taus):.3f} | {quantile(r, .1):.2f} | "
              f"{quantile(r, .5):.2f} | {quantile(r, .9):.2f} | "
              f"{quantile(r, .9) / quantile(r, .1):.2f} |")
    rows = []
    for p, v in programs.items():
        old = [min(o) for o, _, _ in v]
        rows.append((p, v[0][2], statistics.median(old), quantile(old, .9) / quantile(old, .1),
                     kendall_tau(old, [min(n) for _, n, _ in v]),
                     kendall_tau([n[0] for _, n, _ in v], [n[1] for _, n, _ in v])))
    third = len(rows) // 3
    for label, col, unit in (("median schedule runtime", 2, 1e6), ("schedule runtime p90/p10", 3, 1)):
        rows.sort(key=lambda x: x[col])
        for part in (rows[:third], rows[third:2 * third], rows[2 * third:]):
            print(f"programs with {label} {part[0][col] / unit:.2f}-{part[-1][col] / unit:.2f}: "
                  f"cross-session tau {statistics.mean(x[4] for x in part):.3f}")
    rows.sort(key=lambda x: x[4])
    print("lowest: " + "; ".join(f"{p} {t:.2f} (within the run {w:.2f})"
                                 for p, _, _, _, t, w in rows[:5]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
