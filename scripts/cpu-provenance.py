#!/usr/bin/env python3
"""Which CPU measured what: the project's machines of one kind are not all one CPU (Intel Xeon
and AMD EPYC machines have both been lent), and Halide's target string does not tell them apart.
Records written since 2026-12-01 name their CPU (`cpu`); for older ones it is inferred from the
history of DATA/manifest.json in git: a record finished at time t belongs to the measuring run
whose manifest was the first written at or after t, and a cross-session record to the CPU its
session's manifest block names. Prints the measurements per CPU, and for the shipped runtimes
(the best of each schedule's ok measurements under the manifest's target) which CPU measured
the best, per measurement count; then, for each cross-session run, the Kendall tau (mean over
programs) between its best runtimes and the best of the shipped measurements taken on each CPU.
With --write, first writes the inferred CPU into DATA/measurements.jsonl: every record that
does not name its CPU and whose CPU the history tells gets "cpu" and "cpu_inferred" (how it was
inferred); records whose CPU stays unknown, and every other line, are kept byte for byte. The
datasets take only the runtimes measured on the manifest's CPU (tcost collect, MeasuredOn), so
this is how measurements from before 2026-12-01 keep counting.
usage: PYTHONPATH=build/python /usr/bin/python3 scripts/cpu-provenance.py [--write] DATA_DIR"""
import os
import collections
import datetime
import json
import subprocess
import sys

from measurement_log import load_records, ok_pass_records, passes
from tcost import kendall_tau


def manifest_history(data):
    """(written time, CPU) of each committed manifest, and the CPU of each cross-session run."""
    runs, sessions = {}, {}
    shas = subprocess.run(["git", "log", "--format=%H", "--", f"{data}/manifest.json"],
                          capture_output=True, text=True, check=True).stdout.split()
    for sha in shas:
        text = subprocess.run(["git", "show", f"{sha}:{data}/manifest.json"],
                              capture_output=True, text=True).stdout
        try:
            m = json.loads(text)
        except json.JSONDecodeError:
            continue
        written, cpu = m.get("written"), m.get("machine", {}).get("cpu")
        if written and cpu:
            t = datetime.datetime.strptime(written, "%Y-%m-%dT%H:%M:%SZ")
            runs[t.replace(tzinfo=datetime.timezone.utc).timestamp()] = cpu
        cs = m.get("noise", {}).get("cross_session", {})
        if cs.get("run", {}).get("cpu"):
            sessions[cs["session"]] = cs["run"]["cpu"]
    return sorted(runs.items()), sessions


def cpu_of(r, runs, sessions):
    if r.get("cpu"):
        return r["cpu"]
    if r.get("session"):
        return sessions.get(r["session"], "unknown")
    t = r.get("finished")
    if t is None:
        return "unknown (no timestamp)"
    for written, cpu in runs:
        if written >= t:
            return cpu
    return "unknown (after the last manifest)"


INFERRED = "from the manifest history in git (scripts/cpu-provenance.py)"


def write_inferred(data, runs, sessions):
    """Adds the inferred CPU to the records of DATA/measurements.jsonl that lack one; atomic."""
    path = f"{data}/measurements.jsonl"
    added, unknown = collections.Counter(), 0
    with open(path) as f, open(path + ".tmp", "w") as out:
        for line in f:
            r = json.loads(line)
            cpu = cpu_of(r, runs, sessions)
            if r.get("cpu") or cpu.startswith("unknown"):
                unknown += not r.get("cpu")
                out.write(line)
                continue
            r["cpu"], r["cpu_inferred"] = cpu, INFERRED
            added[cpu] += 1
            out.write(json.dumps(r, separators=(",", ":"), sort_keys=True, ensure_ascii=False))
            out.write("\n")
    os.replace(path + ".tmp", path)
    for cpu, n in sorted(added.items()):
        print(f"wrote cpu {cpu!r} into {n} records")
    print(f"{unknown} records stay without a CPU (unknown)")


def main(data, write=False):
    runs, sessions = manifest_history(data)
    if write:
        write_inferred(data, runs, sessions)
    recs = load_records(data)
    target = json.load(open(f"{data}/manifest.json"))["halide"]["target"]
    per_cpu = collections.Counter()
    for r in recs.values():
        per_cpu[(cpu_of(r, runs, sessions), r.get("target") == target, bool(r.get("session")))] += 1
    print("| CPU | under the data's target | cross-session | measurements |")
    print("|---|---|---|---|")
    for (cpu, same, sess), n in sorted(per_cpu.items()):
        print(f"| {cpu} | {'yes' if same else 'no'} | {'yes' if sess else 'no'} | {n} |")
    best = collections.Counter()
    mixed = 0
    for key, r in recs.items():
        if key.startswith(("repeat|", "session|", "remeasure|")):
            continue
        ok = ok_pass_records(recs, key, target)
        if not ok:
            continue
        cpus = [cpu_of(p, runs, sessions) for p in ok]
        mixed += len(set(cpus)) > 1
        best[(len(ok), cpus[min(range(len(ok)), key=lambda i: ok[i]["best_ns"])])] += 1
    total = sum(best.values())
    print(f"\n{total} shipped runtimes; {mixed} of them are the best of measurements on more "
          "than one CPU")
    print("| measurements under the target | CPU of the best | schedules | share |")
    print("|---|---|---|---|")
    for (n, cpu), k in sorted(best.items()):
        print(f"| {n} | {cpu} | {k} | {k / total:.3f} |")

    print("\n| later run (its CPU) | shipped measurements on | programs | schedules | mean tau "
          "| new/old p50 |")
    print("|---|---|---|---|---|---|")
    for session, scpu in sorted(sessions.items()):
        prefix = f"session|{session}|"
        by_cpu = collections.defaultdict(lambda: collections.defaultdict(list))
        for key, r in recs.items():
            if not key.startswith(prefix) or not r.get("ok"):
                continue
            new = passes(recs, key, target)
            first = key[len(prefix):]
            if not new or first not in recs:
                continue
            old = collections.defaultdict(list)
            for p in ok_pass_records(recs, first, target):
                old[cpu_of(p, runs, sessions)].append(p["best_ns"])
            for cpu, v in old.items():
                by_cpu[cpu][r["instance"]].append((min(v), min(new)))
        for cpu, programs in sorted(by_cpu.items()):
            programs = {k: v for k, v in programs.items() if len(v) >= 10}
            if not programs:
                continue
            taus = [kendall_tau([a for a, _ in v], [b for _, b in v]) for v in programs.values()]
            ratios = sorted(b / a for v in programs.values() for a, b in v)
            print(f"| {session} ({scpu}) | {cpu} | {len(programs)} | "
                  f"{sum(len(v) for v in programs.values())} | {sum(taus) / len(taus):.3f} | "
                  f"{ratios[len(ratios) // 2]:.2f} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 2) or (len(args) == 2 and args[0] != "--write"):
        sys.exit(__doc__)
    main(args[-1], write=len(args) == 2)
