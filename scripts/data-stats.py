#!/usr/bin/env python3
"""Runtime figures of a collection (the README's shipped-dataset bullet): over the schedules
measured at least four times on the data's CPU, every pass of them successful (as
scripts/pass-noise.py takes them, through measurement_log.py), the range of runtimes, each
program's best schedule, and how much faster the best is than the default schedule (every stage
at root, no split, vector, parallel or unroll). Each runtime is the best of a schedule's passes.
With FAMILIES (comma-separated), the same figures for those families alone.
usage: python3 scripts/data-stats.py DATA_DIR [FAMILIES]   (from the repository root)"""
import collections
import statistics
import sys

from measurement_log import data_cpu, data_field, fully_measured, load_records

DEFAULT_STAGE = "r0x0.v1.p0.u1.o0.ro0.s0"


def main():
    data = sys.argv[1]
    chosen = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    recs, cpu, field = load_records(data), data_cpu(data), data_field(data)
    best_of, family = {}, {}
    for instance, key, ps in fully_measured(recs, field):
        on_cpu = [p[field] / 1e6 for p in ps if p.get("cpu") == cpu]
        if len(on_cpu) >= 4:
            best_of[key] = min(on_cpu)
            family[key] = (recs[key]["family"], instance)
    report(best_of, family, lambda f: True, "all families")
    if chosen:
        report(best_of, family, lambda f: f in chosen, "the families named")


def report(all_best, family, keep, name):
    best_of = {k: ms for k, ms in all_best.items() if keep(family[k][0])}
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
