#!/usr/bin/env python3
"""Where the noise of single measurements comes from, in a collection measured with several passes
(tcost collect --passes K, K >= 4): for every schedule, its K best runtimes, each from its own
measuring process. Prints how two single measurements agree (Kendall's tau per program, the
spread of their ratio), how bests of m against bests of m agree (m = 1 .. K/2, disjoint passes),
and how much of a measurement's deviation from its schedule's median is shared with the
measurements just before and after it in time (drift of the machine) rather than its own (the
process: memory layout, placement). Kendall's tau-b is tcost's own (the Python module).
usage: PYTHONPATH=build/python /usr/bin/python3 scripts/pass-noise.py DATA_DIR [DATA_DIR...]
       ... scripts/pass-noise.py --compare NAME=DIR[,DIR...] NAME=DIR[,DIR...] ...
       ... scripts/pass-noise.py --statistics DATA_DIR [DATA_DIR...]
The --statistics form compares the statistic taken per measuring process and over passes. The
second form prints one row per protocol NAME: each figure's mean +- sd over its DIRs (runs of
the same protocol at different times; scripts/noise-knobs.sh alternates them)."""
import collections
import itertools
import math
import statistics
import sys

from measurement_log import fully_measured, load_records, quantile
from tcost import kendall_tau


def load(data, field="best_ns"):
    """instance -> key -> [(finished, FIELD)] per pass (FIELD: a measuring process's best_ns,
    third_ns or median_ns), and K, the passes every schedule is cut to. While a collection's
    later passes are under way, schedules have uneven counts: K is the most passes that at
    least half the schedules measured twice or more have; schedules with fewer are left out
    (said on stderr), and so are programs left with fewer than two schedules."""
    schedules = collections.defaultdict(dict)
    for instance, key, ps in fully_measured(load_records(data), field):
        if len(ps) >= 2:
            schedules[instance][key] = [(p["finished"], p[field]) for p in ps]
    counts = sorted((len(v) for s in schedules.values() for v in s.values()), reverse=True)
    if not counts:
        sys.exit(f"{data}: no schedule measured in two passes or more")
    k = counts[(len(counts) - 1) // 2]
    kept = {i: {key: v[:k] for key, v in s.items() if len(v) >= k}
            for i, s in schedules.items()}
    kept = {i: s for i, s in kept.items() if len(s) >= 2}
    left = len(counts) - sum(len(s) for s in kept.values())
    if left:
        print(f"{data}: {left} of {len(counts)} schedules measured in 2 or more passes are "
              f"left out (fewer than {k} passes, or their program has one)", file=sys.stderr)
    return kept, k


def best_of(progs, k, m, over=min):
    """Bests of m against bests of m over disjoint passes (the first 2m, and the last 2m): the
    mean tau over programs and the ratios of all pairs. OVER combines a schedule's m passes
    (min: the best; statistics.median)."""
    taus, ratios = [], []
    for a, b in [(range(0, m), range(m, 2 * m)), (range(k - 2 * m, k - m), range(k - m, k))]:
        for s in progs.values():
            x = [over([v[i][1] for i in a]) for v in s.values()]
            y = [over([v[i][1] for i in b]) for v in s.values()]
            taus.append(kendall_tau(x, y))
            ratios += [q / p for p, q in zip(x, y)]
    return statistics.mean(taus), ratios


def figures(data):
    """One run's figures: tau and ratio spread of bests of m against bests of m (m up to K/2),
    the sd of single measurements' log deviation, and the share deviating by more than 20%."""
    progs, k = load(data)
    out = {"bests": k // 2}
    for m in range(1, k // 2 + 1):
        out[f"tau{m}"], ratios = best_of(progs, k, m)
        out[f"spread{m}"] = quantile(ratios, .9) / quantile(ratios, .1)
    d = [math.log(t / statistics.median(u for _, u in v))
         for s in progs.values() for v in s.values() for _, t in v]
    out["sd"] = statistics.pstdev(d)
    out["outliers"] = sum(1 for x in d if abs(x) > math.log(1.2)) / len(d)
    return out


def compare(specs):
    table = [(spec.split("=", 1)[0], [figures(d) for d in spec.split("=", 1)[1].split(",")])
             for spec in specs]
    bests = min(r["bests"] for _, runs in table for r in runs)  # columns every run has
    head = " | ".join(["tau, one against one | p90/p10"] + [
        f"tau, best of {m} against best of {m} | p90/p10" for m in range(2, bests + 1)])
    print(f"| protocol | runs | {head} | sd of log deviation | measurements off by >20% |")
    print("|---" * (4 + 2 * bests) + "|")
    for name, runs in table:

        def cell(key, fmt="{:.3f}"):
            v = [r[key] for r in runs]
            sd = statistics.stdev(v) if len(v) > 1 else 0.0
            return f"{fmt.format(statistics.mean(v))} ± {fmt.format(sd)}"
        per_m = " | ".join(f"{cell(f'tau{m}')} | {cell(f'spread{m}', '{:.2f}')}"
                           for m in range(1, bests + 1))
        print(f"| {name} | {len(runs)} | {per_m} | {cell('sd')} | "
              f"{cell('outliers', '{:.2f}')} |")


def report(data):
    progs, k = load(data)
    n = sum(len(s) for s in progs.values())
    print(f"## {data}: {n} schedules of {len(progs)} programs, {k} passes each")
    print("| comparison | mean tau over programs | ratio p10 | p90 | p90/p10 |")
    print("|---|---|---|---|---|")
    for m in range(1, k // 2 + 1):
        tau, ratios = best_of(progs, k, m)
        r10, r90 = quantile(ratios, .1), quantile(ratios, .9)
        print(f"| best of {m} against best of {m} | {tau:.3f} | "
              f"{r10:.3f} | {r90:.3f} | {r90 / r10:.3f} |")
    # Deviations of single measurements from their schedule's median, in time order.
    dev = []  # (finished, log deviation, instance)
    for inst, s in progs.items():
        for v in s.values():
            med = statistics.median(t for _, t in v)
            dev += [(f, math.log(t / med), inst) for f, t in v]
    dev.sort()
    d = [x[1] for x in dev]
    mean = statistics.mean(d)
    var = statistics.pvariance(d)
    lag1 = sum((d[i] - mean) * (d[i + 1] - mean) for i in range(len(d) - 1)) / (len(d) - 1) / var
    # The drift: the mean deviation of the 10 measurements on either side (not itself).
    w = 10
    shared = []
    for i in range(len(d)):
        nb = d[max(0, i - w):i] + d[i + 1:i + 1 + w]
        shared.append(statistics.mean(nb))
    resid = [a - b for a, b in zip(d, shared)]
    print(f"single measurements: sd of log deviation from the schedule's median "
          f"{math.sqrt(var):.3f}; lag-1 autocorrelation in time {lag1:.2f}; "
          f"sd after removing the drift of the 20 neighbours in time "
          f"{statistics.pstdev(resid):.3f}")
    print("| program | median runtime ms | schedule p90/p10 | sd of log deviation | "
          "one-vs-one tau (mean over pass pairs) |")
    print("|---|---|---|---|---|")
    for inst, s in sorted(progs.items()):
        meds = [statistics.median(t for _, t in v) for v in s.values()]
        sd = statistics.pstdev([x for x in (math.log(t / statistics.median(u for _, u in v))
                                            for v in s.values() for _, t in v)])
        taus = [kendall_tau([v[i][1] for v in s.values()], [v[j][1] for v in s.values()])
                for i, j in itertools.combinations(range(k), 2)]
        print(f"| {inst} | {statistics.median(meds) / 1e6:.2f} | "
              f"{quantile(meds, .9) / quantile(meds, .1):.2f} | {sd:.3f} | "
              f"{statistics.mean(taus):.3f} |")


def statistic_table(data):
    """The statistic taken, per measuring process (its best run, third-best, median run) and
    over a schedule's passes (the minimum, the median): tau / p90/p10 of m against m."""
    loaded = {field: load(data, field) for field in ["best_ns", "third_ns", "median_ns"]}
    bests = min(k for _, k in loaded.values()) // 2  # m that every field's records reach
    print(f"## {data}: tau / p90/p10, m passes against m passes, m = 1 .. {bests}")
    print("| per process | over passes | " + " | ".join(f"m = {m}" for m in range(1, bests + 1))
          + " |")
    print("|---|---|" + "---|" * bests)
    for field, (progs, k) in loaded.items():
        for name, over in [("minimum", min), ("median", statistics.median)]:
            cells = []
            for m in range(1, bests + 1):
                tau, ratios = best_of(progs, k, m, over)
                cells.append(f"{tau:.3f} / {quantile(ratios, .9) / quantile(ratios, .1):.2f}")
            print(f"| {field[:-3]} run | {name} | " + " | ".join(cells) + " |")


if len(sys.argv) > 1 and sys.argv[1] == "--compare":
    compare(sys.argv[2:])
elif len(sys.argv) > 1 and sys.argv[1] == "--statistics":
    for data in sys.argv[2:]:
        statistic_table(data)
else:
    for data in sys.argv[1:]:
        report(data)
