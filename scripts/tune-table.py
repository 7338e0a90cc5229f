#!/usr/bin/python3
"""Prints a tuning comparison as the README's markdown table.

usage: tune-table.py LABEL NAME=FILE...
Each FILE is a comparison in `tcost tune --json`'s form (the plugin's TCOST_COMPARE_OUT writes the
same); NAME labels its row. Missing files are skipped. Rows: runtime (search time) per method,
then geomean speed-up over the default schedule and geomean runtime relative to tcost's; with
confirmations (`tcost tune --confirm`, the runtimes their medians), a last row: the geomean of
each method's best run during its search over its confirmed runtime (below 1: the search's figure
was optimistic). Failed methods are listed after the table. Used by scripts/tune-table.sh and
scripts/tune-generators-table.sh.
"""
import json
import math
import os
import sys

label, pairs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
rows = []
for name, path in pairs:
    if os.path.exists(path):
        j = json.load(open(path))
        rows.append((name, {m["method"]: m for m in j["programs"][0]["methods"]}))
if not rows:
    sys.exit("tune-table: no comparison files")
methods = list(rows[0][1])
print(f"| {label} | " + " | ".join(methods) + " |")
print("|---|" + "---|" * len(methods))
for name, m in rows:
    cells = [f"{m[k]['runtime_ms']:.3f} ms ({m[k]['search_s']:.1f} s)" if m[k]["ok"] else "failed"
             for k in methods]
    print(f"| {name} | " + " | ".join(cells) + " |")


def geo(k, base):
    v = [math.log(m[base]["runtime_ms"] / m[k]["runtime_ms"]) for _, m in rows
         if m[k]["ok"] and m[base]["ok"]]
    return math.exp(sum(v) / len(v)) if v else float("nan")


print("| speed-up over default (geomean) | " +
      " | ".join(f"{geo(k, 'default'):.2f}x" for k in methods) + " |")
print("| runtime / tcost's (geomean) | " +
      " | ".join(f"{1 / geo(k, 'tcost'):.2f}" for k in methods) + " |")
confirmed = lambda r: r["ok"] and r.get("confirm_ms")
n = max((len(m[k]["confirm_ms"]) for _, m in rows for k in methods if confirmed(m[k])), default=0)
if n:
    def optimism(k):
        v = [math.log(m[k]["search_runtime_ms"] / m[k]["runtime_ms"]) for _, m in rows
             if confirmed(m[k])]
        return math.exp(sum(v) / len(v)) if v else float("nan")
    print(f"| search's best run / median of {n} confirmations (geomean) | " +
          " | ".join(f"{optimism(k):.2f}" for k in methods) + " |")
for name, m in rows:
    for k in methods:
        if not m[k]["ok"]:
            print(f"{name} {k}: {m[k]['error']}")
