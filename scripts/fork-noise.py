#!/usr/bin/env python3
"""Are timing processes forked from one compile (tcost collect --forks F) as independent as
measurements that compile for themselves? For each collection: one measurement against one of
the same compile (two forks), one against one of different compiles (the same fork of two
compiles), and the best of a compile's F forks against the best of another's, each as the mean
Kendall tau-b over programs (and over pairs) and the p10, p90 and p90/p10 of the ratios.
A collection of --compile-each (the control) has lone measurements in place of forks.
A collection's F is its manifest's protocol.forks (1: every measurement its own compile, where
only the across row applies). Schedules are cut to the fewest measurements any has.
usage: PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/fork-noise.py DIR [DIR...]"""
import collections
import itertools
import json
import statistics
import sys

from measurement_log import fully_measured, load_records, quantile
from tcost import kendall_tau


def compiles(data):
    """instance -> [per schedule: [per compile: [best_ns of each fork]]], and F."""
    with open(f"{data}/manifest.json") as f:
        protocol = json.load(f)["protocol"]
    forks = protocol.get("forks", 1)
    progs = collections.defaultdict(list)
    for instance, _, ps in fully_measured(load_records(data)):
        progs[instance].append([p["best_ns"] for p in ps])
    k = min(len(v) for s in progs.values() for v in s)
    k -= k % forks
    return {i: [[v[c:c + forks] for c in range(0, k, forks)] for v in s]
            for i, s in progs.items()}, forks, k // forks, protocol.get("compile_each", False)


def agreement(progs, pick_pairs):
    """Mean tau over programs and pairs, and all ratios; pick_pairs(n_compiles) yields
    ((compile, fork-or-None), (compile, fork-or-None)) pairs, None meaning the compile's best."""
    taus, ratios = [], []
    for s in progs.values():
        for a, b in pick_pairs:
            def value(v, at):
                c, f = at
                return min(v[c]) if f is None else v[c][f]
            x = [value(v, a) for v in s]
            y = [value(v, b) for v in s]
            taus.append(kendall_tau(x, y))
            ratios += [q / p for p, q in zip(x, y)]
    return statistics.mean(taus), ratios


def main(dirs):
    print("| collection | forks x compiles | comparison | mean tau | ratio p10 | p90 | p90/p10 |")
    print("|---|---|---|---|---|---|---|")
    for data in dirs:
        progs, forks, n, each = compiles(data)
        # --compile-each: a "compile"'s F measurements are F lone ones, one after another.
        group = "group" if each else "compile"
        rows = []
        if forks > 1:
            rows.append(("one against one, lone measurements one after another" if each else
                         "one against one, same compile",
                         [((c, i), (c, j)) for c in range(n)
                          for i, j in itertools.combinations(range(forks), 2)]))
        rows.append((f"one against one, different {group}s",
                     [((c, i), (d, i)) for c, d in itertools.combinations(range(n), 2)
                      for i in range(forks)]))
        if forks > 1:
            rows.append((f"best of a {group}'s {forks} against another's",
                         [((c, None), (d, None)) for c, d in itertools.combinations(range(n), 2)]))
        for name, pairs in rows:
            if not pairs:  # one compile: nothing to compare it with
                continue
            tau, r = agreement(progs, pairs)
            lo, hi = quantile(r, .1), quantile(r, .9)
            print(f"| {data} | {forks} x {n} | {name} | {tau:.3f} | {lo:.3f} | {hi:.3f} | "
                  f"{hi / lo:.3f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
