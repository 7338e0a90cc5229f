#!/usr/bin/env python3
"""Where the measurement noise is: reads a collection's measurements.jsonl and, for the schedules
of one cross-session run (tcost collect --cross-session N --passes K --session NAME), compares
single measurements and bests of two and three (each measurement's best run, or its median run
where the manifest's statistic is the median: collect --statistic), across the sessions and
within the later run, and the tau by the programs' runtime and spread. With a second session
name, it also compares the two later runs with each other on the schedules both measured.
Kendall's tau-b is tcost's own (the Python module), the metric behind the manifest's figure.

The shipped side takes, as the manifest does, only the measurements on the collection's CPU
(--cpu data, the default: manifest.json's machine.cpu); --cpu any takes every CPU's (how the
figures in the README before 2026-12-02 were made), --cpu NAME one named CPU. The later run's
own passes are taken whatever its CPU; the script prints it.
usage: PYTHONPATH=build/python /usr/bin/python3 scripts/cross-session-noise.py DATA_DIR SESSION
           [OTHER_SESSION] [--cpu data|any|NAME] [--statistics]
--statistics also prints, across the sessions, each statistic of a measuring process (best,
third-best, median run) over each side's passes (first, minimum, median)."""
import argparse
import collections
import statistics

from measurement_log import data_cpu, data_field, load_records, ok_pass_records, passes, quantile
from tcost import kendall_tau


def between_sessions(recs, session, other, field):
    """Kendall tau per program between two later runs' bests (of 1, 2 and all passes)."""
    programs = collections.defaultdict(list)
    prefix = f"session|{session}|"
    for key, r in recs.items():
        twin = f"session|{other}|" + key[len(prefix):]
        if not key.startswith(prefix) or not r.get("ok") or not recs.get(twin, {}).get("ok"):
            continue
        a = passes(recs, twin, r["target"], None, field)
        b = passes(recs, key, r["target"], None, field)
        if a and b:
            programs[r["instance"]].append((a, b))
    programs = {p: v for p, v in programs.items() if len(v) >= 2}
    print(f"\n{other} against {session}: {sum(len(v) for v in programs.values())} schedules "
          f"of {len(programs)} programs")
    print("| statistic on each side | mean tau over programs | new/old p10 | p90 | p90/p10 |")
    print("|---|---|---|---|---|")
    for name, k in (("one measurement", 1), ("best of two", 2), ("best of all passes", 99)):
        taus = [kendall_tau([min(a[:k]) for a, _ in v], [min(b[:k]) for _, b in v])
                for v in programs.values()]
        r = [min(b[:k]) / min(a[:k]) for v in programs.values() for a, b in v]
        print(f"| {name} | {statistics.mean(taus):.3f} | {quantile(r, .1):.2f} | "
              f"{quantile(r, .9):.2f} | {quantile(r, .9) / quantile(r, .1):.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("session")
    ap.add_argument("other", nargs="?")
    ap.add_argument("--statistics", action="store_true",
                    help="also compare the statistics of a process and over passes")
    ap.add_argument("--cpu", default="data",
                    help="the shipped measurements' CPU: data (the manifest's), any, or a name")
    args = ap.parse_args()
    data, session, other = args.data, args.session, args.other
    cpu = {"data": lambda: data_cpu(data), "any": lambda: None}.get(args.cpu, lambda: args.cpu)()
    recs = load_records(data)
    field = data_field(data)  # the collection's statistic (collect --statistic)
    prefix = f"session|{session}|"
    # The later run's records: its first passes and their repeats.
    later = {k for k in recs if k.startswith(prefix) or k.startswith("repeat|")
             and k.split("|", 2)[2].startswith(prefix)}
    run_cpus = collections.Counter(recs[k].get("cpu", "unknown") for k in later)
    print(f"later run {session} measured on: " +
          ", ".join(f"{c} ({n} records)" for c, n in run_cpus.most_common()))
    # The boots each side was measured in (records name them since 2026-12-07): sessions of one
    # boot agree better than sessions of two (docs/collect.md, "Sizing a new collection ...").
    boots = [collections.Counter(r.get("boot", "unrecorded")[:10] for k, r in recs.items()
                                 if (k in later) == side) for side in (True, False)]
    shared = set(boots[0]) & set(boots[1]) - {"unrecorded"}
    print("boots: later run " + ", ".join(f"{b} ({n})" for b, n in boots[0].most_common()) +
          "; the rest " + ", ".join(f"{b} ({n})" for b, n in boots[1].most_common()) +
          ("; shared: " + ", ".join(sorted(shared)) if shared else "; none shared"))
    print(f"shipped measurements taken on: {cpu or 'any CPU'}; each measurement's {field}")

    programs = collections.defaultdict(list)  # instance -> [(old passes, new passes, family)]
    for key, r in recs.items():
        if not key.startswith(prefix) or not r.get("ok"):
            continue
        first = key[len(prefix):]
        if first not in recs or not recs[first].get("ok"):
            continue
        old = passes(recs, first, r["target"], cpu, field)
        new = passes(recs, key, r["target"], None, field)
        if old and len(new) >= 2:
            programs[r["instance"]].append((old, new, r["family"]))
    programs = {p: v for p, v in programs.items() if len(v) >= 2}
    if not programs:
        raise SystemExit(f"no program has two schedules measured by session {session} and "
                         f"shipped on {cpu or 'any CPU'}: is the session's name right?")
    # (name, passes each side needs, old statistic, new statistic), each statistic of the old
    # and the new passes: each row is taken over the schedules with enough passes on both sides,
    # so a run of two passes shows the first rows only.
    sides = [
        ("one measurement against one, across sessions", 1,
         lambda o, n: o[-1], lambda o, n: n[0]),
        ("one against one, within the later run (its pass 1 against its pass 2)", 2,
         lambda o, n: n[0], lambda o, n: n[1]),
        ("shipped (best of all earlier passes) against one measurement", 1,
         lambda o, n: min(o), lambda o, n: n[0]),
        ("best of two against best of two, across sessions", 2,
         lambda o, n: min(o[:2]), lambda o, n: min(n[:2])),
        ("best of three against best of three, across sessions", 3,
         lambda o, n: min(o[:3]), lambda o, n: min(n[:3])),
        ("shipped against the later run's best, across sessions", 1,
         lambda o, n: min(o), lambda o, n: min(n)),
    ]
    print(f"{sum(len(v) for v in programs.values())} schedules of {len(programs)} programs")
    print("| comparison | schedules | mean tau over programs | new/old p10 | p50 | p90 | p90/p10 "
          "| p90/p10 within program |")
    print("|---|---|---|---|---|---|---|---|")
    for name, k, a, b in sides:
        use = {p: [(a(o, n), b(o, n)) for o, n, _ in v if len(o) >= k and len(n) >= k]
               for p, v in programs.items()}
        use = {p: v for p, v in use.items() if len(v) >= 2}
        if not use:
            continue
        taus = [kendall_tau([x for x, _ in v], [y for _, y in v]) for v in use.values()]
        r = [y / x for v in use.values() for x, y in v]
        within = []
        for v in use.values():
            m = statistics.median(y / x for x, y in v)
            within += [y / x / m for x, y in v]
        print(f"| {name} | {sum(len(v) for v in use.values())} | {statistics.mean(taus):.3f} | "
              f"{quantile(r, .1):.2f} | {quantile(r, .5):.2f} | {quantile(r, .9):.2f} | "
              f"{quantile(r, .9) / quantile(r, .1):.2f} | "
              f"{quantile(within, .9) / quantile(within, .1):.2f} |")
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
    if other:
        between_sessions(recs, session, other, field)
    if args.statistics:
        statistics_table(recs, session, cpu)


def statistics_table(recs, session, cpu):
    """Across the sessions, each statistic of a measuring process (its best, third-best or median
    timed run) taken over each side's passes (the first pass alone, the minimum, the median), on
    the schedules whose passes all succeeded on both sides: what each choice would make of the
    same measurements (docs/collect.md, "Short programs: a minimum timed total")."""
    prefix = f"session|{session}|"
    programs = collections.defaultdict(list)  # instance -> [(old records, new records)]
    for key, r in recs.items():
        if not key.startswith(prefix) or not r.get("ok") or key[len(prefix):] not in recs:
            continue
        old = ok_pass_records(recs, key[len(prefix):], r["target"], cpu)
        new = ok_pass_records(recs, key, r["target"])
        if old and new:
            programs[r["instance"]].append((old, new))
    k = max(min(len(o), len(n)) for v in programs.values() for o, n in v)
    programs = {p: [(o, n) for o, n in v if len(o) >= k and len(n) >= k]
                for p, v in programs.items()}
    print(f"\nstatistics over {k} passes a side (every schedule with at least {k} on both):")
    print("| per process | over passes | mean tau over programs | new/old p10 | p90 | p90/p10 |")
    print("|---|---|---|---|---|---|")
    overs = (("first pass", lambda x: x[0]), ("minimum", min), ("median", statistics.median))
    for field, what in (("best_ns", "best run"), ("third_ns", "third-best run"),
                        ("median_ns", "median run")):
        for over, f in overs:
            pairs = {p: [(f([x[field] for x in o[:k]]), f([x[field] for x in n[:k]]))
                         for o, n in v] for p, v in programs.items()}
            pairs = {p: v for p, v in pairs.items() if len(v) >= 2}
            taus = [kendall_tau([a for a, _ in v], [b for _, b in v]) for v in pairs.values()]
            r = [b / a for v in pairs.values() for a, b in v]
            print(f"| {what} | {over} | {statistics.mean(taus):.3f} | {quantile(r, .1):.2f} | "
                  f"{quantile(r, .9):.2f} | {quantile(r, .9) / quantile(r, .1):.2f} |")


if __name__ == "__main__":
    main()
