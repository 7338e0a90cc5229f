#!/usr/bin/env python3
"""How far a schedule's measuring processes disagree, by kind of schedule (docs/collect.md, "Rare
fast runs are right; two threads settle in modes"): for every schedule with at least N ok passes
(on CPU, when given), the max/min of the best runs of its first N passes; printed per kind
(serial: no parallel loop; parallel; parallel with ro2, the reduction loops outside every pure
loop) and per program as the median over schedules (the lower middle value) and the share over
1.5x; and the share of measuring processes whose median run is over 1.5x and 3x their best.
usage: PYTHONPATH=scripts python3 scripts/process-spread.py [--passes N] [--cpu NAME] DIR..."""
import argparse
import collections

from measurement_log import load_records, pass_records


def kind(key):
    stages = key.split("|", 1)[1].split("/")
    parallel = [s for s in stages if ".p1." in s or ".p2." in s]
    if any(".ro2." in s for s in parallel):
        return "parallel with ro2"
    return "parallel" if parallel else "serial"


def lower_median(v):
    return sorted(v)[(len(v) - 1) // 2]


def summary(spreads):
    if not spreads:
        return "no schedules with that many passes"
    return (f"{len(spreads)} schedules, max/min {lower_median(spreads):.3f}, "
            f"over 1.5x {sum(x > 1.5 for x in spreads) / len(spreads):.3f}")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--passes", type=int, default=3)
    a.add_argument("--cpu")
    a.add_argument("dirs", nargs="+")
    o = a.parse_args()
    for data in o.dirs:
        recs = load_records(data)
        by_kind, by_program, ratios = (collections.defaultdict(list),
                                       collections.defaultdict(list), [])
        for key in recs:
            if key.startswith(("repeat|", "session|", "remeasure|")):
                continue
            ps = [p for p in pass_records(recs, key) if p.get("ok") and p.get("best_ns", 0) > 0
                  and (o.cpu is None or p.get("cpu") == o.cpu)]
            ratios += [p["median_ns"] / p["best_ns"] for p in ps if p.get("median_ns")]
            if len(ps) < o.passes:
                continue
            bests = [p["best_ns"] for p in ps[:o.passes]]
            by_kind[kind(key)].append(max(bests) / min(bests))
            by_program[key.split("|")[0]].append(max(bests) / min(bests))
        print(f"## {data}: first {o.passes} passes")
        for k, v in sorted(by_kind.items()):
            print(f"{k}: {summary(v)}")
        print(f"all: {summary([x for v in by_kind.values() for x in v])}")
        print("per program: " + ", ".join(f"{p} {lower_median(v):.2f}"
                                           for p, v in sorted(by_program.items())))
        if ratios:
            print(f"processes: {len(ratios)}, median run over 1.5x best "
                  f"{sum(r > 1.5 for r in ratios) / len(ratios):.3f}, over 3x "
                  f"{sum(r > 3 for r in ratios) / len(ratios):.3f}")


main()
