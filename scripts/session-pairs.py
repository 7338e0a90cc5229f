#!/usr/bin/env python3
"""Every pair of sessions of one collection, and sessions pooled: which sessions disagree.

A collection measured again by later runs (tcost collect --cross-session N --session NAME, as
scripts/cross-study.sh does) holds several sessions of the same schedules: the first collection
(named "first" here) and each later run. cross-session-noise.py compares one later run with the
first; this script compares every pair of sessions, each side the best of its first PASSES
passes (default 3), as mean Kendall tau over programs and the p90/p10 of new/old runtimes, with
each session's speed (the median over its schedules of its runtime over the first session's) and
its time and boot. Then it pools sessions: each schedule's runtime on a side the geometric mean
of the bests of several sessions, a sessions against b others, every such pairing summarised.
Only schedules that every session measured (every pass ok) are compared, so all figures are of
one sample.
usage: PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/session-pairs.py DATA_DIR
           [--passes 3]"""
import argparse
import collections
import itertools
import math
import statistics
import time

from measurement_log import load_records, pass_records, quantile
from tcost import kendall_tau


def sessions_of(recs, passes):
    """{session: {schedule key: best of its first PASSES ok passes}}, "first" for the first
    collection; a schedule with fewer ok passes is left out of that session. Also each
    session's (first finish time, boots) and each schedule's program."""
    best, when, program = collections.defaultdict(dict), {}, {}
    for key, r in recs.items():
        if key.startswith("repeat|"):
            continue
        session, schedule = "first", key
        if key.startswith("session|"):
            _, session, schedule = key.split("|", 2)
        runs = [p for p in pass_records(recs, key)[:passes]
                if p.get("ok") and p.get("best_ns", 0) > 0]
        if len(runs) < passes:
            continue
        best[session][schedule] = min(p["best_ns"] for p in runs)
        program[schedule] = r["instance"]
        t, boots = when.get(session, (math.inf, set()))
        when[session] = (min(t, min(p.get("finished", math.inf) for p in runs)),
                         boots | {p.get("boot", "")[:8] or "unrecorded" for p in runs})
    return best, when, program


def compare(side_a, side_b, program):
    """Mean tau over programs and new/old p90/p10 of two {schedule: runtime} sides."""
    by_program = collections.defaultdict(list)
    for k, a in side_a.items():
        by_program[program[k]].append((a, side_b[k]))
    taus = [kendall_tau([a for a, _ in v], [b for _, b in v])
            for v in by_program.values() if len(v) >= 2]
    ratios = [b / a for v in by_program.values() for a, b in v]
    return statistics.mean(taus), quantile(ratios, .9) / quantile(ratios, .1)


def pooled(best, sessions, keys):
    """{schedule: geometric mean of the sessions' bests}."""
    return {k: math.exp(statistics.mean(math.log(best[s][k]) for s in sessions)) for k in keys}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    best, when, program = sessions_of(load_records(args.data), args.passes)
    names = sorted(best, key=lambda s: when[s][0])
    if len(names) < 2:
        raise SystemExit(f"{args.data}: fewer than two sessions measured schedules in "
                         f"{args.passes} passes")
    keys = set.intersection(*(set(best[s]) for s in names))
    best = {s: {k: best[s][k] for k in keys} for s in names}
    print(f"{args.data}: {len(keys)} schedules of {len(set(program[k] for k in keys))} programs "
          f"measured by all {len(names)} sessions, each the best of its first {args.passes} "
          "passes")
    print("\n| session | started (UTC) | boot | speed: median runtime over the first's |")
    print("|---|---|---|---|")
    for s in names:
        speed = statistics.median(best[s][k] / best[names[0]][k] for k in keys)
        print(f"| {s} | {time.strftime('%Y-%m-%d %H:%M', time.gmtime(when[s][0]))} | "
              f"{', '.join(sorted(when[s][1]))} | {speed:.3f} |")
    print("\n| sessions | mean tau over programs | new/old p90/p10 |")
    print("|---|---|---|")
    for a, b in itertools.combinations(names, 2):
        tau, spread = compare(best[a], best[b], program)
        print(f"| {a} against {b} | {tau:.3f} | {spread:.2f} |")
    if len(names) < 3:
        return
    # Pooled sides: every way of taking a sessions for one side and b others for the other
    # (a >= b, a + b <= all), summarised per (a, b): how many, mean tau (range), mean p90/p10.
    print("\n| pooled (each side the geometric mean of its sessions' bests) | pairings | "
          "mean tau over pairings (range) | mean new/old p90/p10 |")
    print("|---|---|---|---|")
    for a in range(1, len(names)):
        for b in range(1, min(a, len(names) - a) + 1):
            got = []
            for left in itertools.combinations(names, a):
                rest = [s for s in names if s not in left]
                for right in itertools.combinations(rest, b):
                    if a == b and right < left:
                        continue  # each pairing of two equal sides once
                    got.append(compare(pooled(best, left, keys), pooled(best, right, keys),
                                       program))
            taus = [t for t, _ in got]
            print(f"| {a} against {b} | {len(got)} | {statistics.mean(taus):.3f} "
                  f"({min(taus):.3f}-{max(taus):.3f}) | "
                  f"{statistics.mean(x for _, x in got):.2f} |")


if __name__ == "__main__":
    main()
