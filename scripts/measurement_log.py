"""Reading a collection's measurements.jsonl from the analysis scripts (after the C++ passes_of
and runtime_of_passes in src/halide/datasets.cpp): records by key, and the ok runtimes of a record
and its repeats under one Halide target, in pass order. Like the datasets (MeasuredOn), they can
take only the measurements on one CPU (the collection's: data_cpu); with cpu=None they take every
CPU's, as cpu-provenance.py does to compare CPUs."""
import json


def load_records(data):
    """Every record of DATA/measurements.jsonl by key (a later line replaces an earlier one)."""
    recs = {}
    with open(f"{data}/measurements.jsonl") as f:
        for line in f:
            r = json.loads(line)
            recs[r["key"]] = r
    return recs


def data_cpu(data):
    """The collection's CPU: the machine.cpu of DATA/manifest.json (as the C++ data_cpu)."""
    with open(f"{data}/manifest.json") as f:
        return json.load(f)["machine"]["cpu"]


def data_field(data):
    """The field the collection's datasets read off each measurement (as the C++
    data_statistic): median_ns when DATA/manifest.json's protocol.statistic is the median run
    (collect --statistic median-run), else best_ns."""
    with open(f"{data}/manifest.json") as f:
        statistic = json.load(f).get("protocol", {}).get("statistic", "best run (ns)")
    if statistic in ("median run (ns)", "median-run"):
        return "median_ns"
    if statistic in ("best run (ns)", "best-run"):
        return "best_ns"
    raise SystemExit(f"{data}/manifest.json: unknown run statistic {statistic!r}")


def pass_records(recs, key):
    """Record KEY and its repeats (repeat|K|KEY), in pass order."""
    out, k = [recs[key]], 2
    while f"repeat|{k}|{key}" in recs:
        out.append(recs[f"repeat|{k}|{key}"])
        k += 1
    return out


def fully_measured(recs, field="best_ns"):
    """(instance, key, pass records) of every first measurement whose passes all succeeded with
    FIELD > 0 (the several-pass studies: pass-noise.py, fork-noise.py)."""
    for key, r in recs.items():
        if key.startswith("repeat|") or key.startswith("session|"):
            continue
        ps = pass_records(recs, key)
        if all(p.get("ok") and p.get(field, 0) > 0 for p in ps):
            yield r["instance"], key, ps


def ok_pass_records(recs, key, target, cpu=None):
    """Record KEY and its repeats that succeeded under TARGET (on CPU unless None), in pass
    order. A record that names no CPU is not on any CPU."""
    return [p for p in pass_records(recs, key)
            if p.get("ok") and p.get("target") == target and p.get("best_ns", 0) > 0
            and (cpu is None or p.get("cpu") == cpu)]


def passes(recs, key, target, cpu=None, field="best_ns"):
    """The ok runtimes (ns; FIELD of each: best_ns, or data_field's) of record KEY and its
    repeats under TARGET (on CPU unless None), in pass order."""
    return [p[field] for p in ok_pass_records(recs, key, target, cpu)]


def failed_check(record):
    """Whether a measurement found its schedule unsound (as the C++ failed_check): a crash, a
    wrong output or a read outside an input. The datasets leave out a schedule with one such
    pass, even when its other passes succeeded."""
    if record.get("ok"):
        return False
    error = record.get("error", "")
    return (error.startswith("crashed") or "wrong output" in error
            or "reads outside its inputs" in error)


def in_datasets(recs, key):
    """Whether the datasets hold the schedule of first measurement KEY: the first succeeded and
    no pass failed_check (first_pass_by_program, any_pass_failed_check in C++)."""
    return recs[key].get("ok", False) and not any(failed_check(r) for r in pass_records(recs, key))


def quantile(v, q):
    """The q-quantile of v, the nearest rank."""
    v = sorted(v)
    return v[int(q * (len(v) - 1) + 0.5)]
