"""Reading a collection's measurements.jsonl from the analysis scripts (a mirror of the C++
passes_of and best_of_passes in src/halide/datasets.cpp): records by key, and the ok runtimes of
a record and its repeats under one Halide target, in pass order."""
import json


def load_records(data):
    """Every record of DATA/measurements.jsonl by key (a later line replaces an earlier one)."""
    recs = {}
    with open(f"{data}/measurements.jsonl") as f:
        for line in f:
            r = json.loads(line)
            recs[r["key"]] = r
    return recs


def passes(recs, key, target):
    """The ok best runtimes (ns) of record KEY and its repeats (repeat|K|KEY) under TARGET."""
    out, k = [recs[key]], 2
    while f"repeat|{k}|{key}" in recs:
        out.append(recs[f"repeat|{k}|{key}"])
        k += 1
    return [p["best_ns"] for p in out
            if p.get("ok") and p.get("target") == target and p.get("best_ns", 0) > 0]
