#!/usr/bin/env python3
"""Runtime figures of a collection (the README's shipped-dataset bullet): over the schedules
measured at least four times on the data's CPU and never refused, the range of runtimes, each
program's best schedule, and how much faster the best is than the default schedule (every stage
at root, no split, vector, parallel or unroll). Each runtime is the best of a schedule's passes.
With FAMILIES (comma-separated), the same figures for those families alone.
usage: python3 scripts/data-stats.py DATA_DIR [FAMILIES]"""
import collections
import json
import os
import statistics
import sys

DEFAULT_STAGE = "r0x0.v1.p0.u1.o0.ro0.s0"


def main():
    data = sys.argv[1]
    chosen = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    cpu = json.load(open(os.path.join(data, "manifest.json")))["machine"]["cpu"]
    runs, family, refused = collections.defaultdict(list), {}, set()
    for line in open(os.path.join(data, "measurements.jsonl")):
        r = json.loads(line)
        if r.get("session") or r.get("cpu") != cpu:
            continue  # a later run's, or another CPU's
        key = r["key"]
        base = key.split("|", 2)[2] if key.startswith("repeat|") else key
        if not r["ok"]:
            refused.add(base)
            continue
        runs[base].append(r["best_ns"] / 1e6)
        family[base] = (r["family"], r["instance"])
    report(runs, family, refused, lambda f: True, "all families")
    if chosen:
        report(runs, family, refused, lambda f: f in chosen, "the families named")


def report(runs, family, refused, keep, name):
    best_of = {k: min(v) for k, v in runs.items()
               if len(v) >= 4 and k not in refused and keep(family[k][0])}
    best, default = collections.defaultdict(lambda: float("inf")), {}
    for key, ms in best_of.items():
        program = family[key][1]
        best[program] = min(best[program], ms)
        if all(s == DEFAULT_STAGE for s in key.split("|", 1)[1].split("/")):
            default[program] = ms
    bests = list(best.values())
    speedups = [default[p] / best[p] for p in default]
    print(f"{name}: {len(best_of)} schedules of {len(best)} programs; runtimes "
          f"{min(best_of.values()):.3f} ms to {max(best_of.values()):.0f} ms; best per program "
          f"{min(bests):.3f}-{max(bests):.1f} ms (median {statistics.median(bests):.2f}); "
          f"default over best {min(speedups):.1f}x-{max(speedups):.0f}x "
          f"(median {statistics.median(speedups):.1f}x, {len(speedups)} programs with a default)")


if __name__ == "__main__":
    main()
