"""Reading a collection's measurements.jsonl from the analysis scripts (after the C++ passes_of
and best_of_passes in src/halide/datasets.cpp): records by key, and the ok runtimes of a record
and its repeats under one Halide target, in pass order. Unlike the datasets, which take only the
measurements on the collection's CPU (MeasuredOn), these take every CPU's; a script that
compares CPUs tells them apart itself (cpu-provenance.py)."""
import json


def load_records(data):
    """Every record of DATA/measurements.jsonl by key (a later line replaces an earlier one)."""
    recs = {}
    with open(f"{data}/measurements.jsonl") as f:
        for line in f:
            r = json.loads(line)
            recs[r["key"]] = r
    return recs


def pass_records(recs, key):
    """Record KEY and its repeats (repeat|K|KEY), in pass order."""
    out, k = [recs[key]], 2
    while f"repeat|{k}|{key}" in recs:
        out.append(recs[f"repeat|{k}|{key}"])
        k += 1
    return out


def ok_pass_records(recs, key, target):
    """Record KEY and its repeats that succeeded under TARGET, in pass order."""
    return [p for p in pass_records(recs, key)
            if p.get("ok") and p.get("target") == target and p.get("best_ns", 0) > 0]


def passes(recs, key, target):
    """The ok best runtimes (ns) of record KEY and its repeats under TARGET, in pass order."""
    return [p["best_ns"] for p in ok_pass_records(recs, key, target)]


def quantile(v, q):
    """The q-quantile of v, the nearest rank."""
    v = sorted(v)
    return v[int(q * (len(v) - 1) + 0.5)]
