#!/usr/bin/env python3
"""The models against the noise ceiling on the same schedules. The cross-session ceiling
(manifest noise.cross_session) is measured on the schedules a later run measured again (about
30 per program), while the models are scored on every schedule of a test program (101-191), so
the two taus are not of one sample. This script restricts both to the later run's schedules of
each test program and gives, per program and in the mean:
- the ceiling: the later run's own ranking (best of its passes) scored against the shipped
  runtimes (tau, and slowdown@1/@5: how much slower the later run's first picks are by the
  shipped runtimes, i.e. how far noise alone moves the first pick),
- each model checkpoint's ranking of the same schedules, scored the same way, and also against
  both sessions pooled (each schedule's runtime the geometric mean of the shipped runtime and
  the later run's best): truer labels than one session's, so how much of a model's gap to the
  ceiling is the test labels' own noise (the ceiling row has no such column: its ranking is
  half of the pooled labels).
Schedules are matched to dataset configurations as the datasets are written (first
measurement of each schedule in log order, runtime the minimum over its passes on the data's
CPU under the session's target of the manifest's statistic, best or median run;
src/halide/datasets.cpp), checked against the runtimes in the
files. Kendall's tau-b and slowdown are tcost's own (the Python module).
usage: PYTHONPATH=build/python /usr/bin/python3 scripts/ceiling-subsets.py DATA_DIR
           [--session NAME] [--split test] [LABEL=]CHECKPOINT...
A checkpoint or ensemble file may be labelled; checkpoints of one label (seeds of one model)
are pooled: their mean tau ± sd over checkpoints, slowdowns as the geomean over all."""
import argparse
import collections
import json
import math
import os

import numpy as np
import tcost
from measurement_log import data_cpu, data_field, in_datasets, load_records, passes


def configs_in_order(recs, instance, target, cpu, field):
    """The keys of one program's configurations in the datasets' order, with their runtimes.
    load_records keeps each key where it first appears in the log (a later line replaces the
    value, not the position), as the C++ log does, so its order is the datasets'."""
    out = []
    for key, r in recs.items():
        if (r.get("instance") != instance or key.startswith(("session|", "repeat|"))
                or not in_datasets(recs, key)):
            continue
        p = passes(recs, key, target, cpu, field)
        if p:
            out.append((key, min(p)))
    return out


def geomean(v):
    return math.exp(np.mean([math.log(x) for x in v]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--session", help="the later run (default: the manifest's)")
    ap.add_argument("--split", default="test")
    a = ap.parse_args()
    manifest = json.load(open(f"{a.data}/manifest.json"))
    cross = manifest["noise"]["cross_session"]
    session = a.session or cross["session"]
    target, cpu, field = cross["run"]["target"], data_cpu(a.data), data_field(a.data)
    recs = load_records(a.data)
    models = []
    for m in a.models:
        label, _, path = m.rpartition("=")
        models.append((label or os.path.basename(path), tcost.Model(path, threads=1)))
    files = sorted(f for f in os.listdir(f"{a.data}/layout/{a.split}") if f.endswith(".npz"))
    ceiling = "ceiling: the later run's ranking"
    # label -> one list per checkpoint of [(tau, s1, s5)] per program
    rows = collections.OrderedDict()
    rows[ceiling] = [[]]
    for label, _ in models:
        rows.setdefault(label, [])
        rows[label].append([])
    instances = []
    sizes = []
    for f in files:
        g = tcost.load(f"{a.data}/layout/{a.split}/{f}")
        t = tcost.load(f"{a.data}/ast/{a.split}/{f}")
        instance = f[:-4]
        order = configs_in_order(recs, instance, target, cpu, field)
        truth = np.asarray(g["config_runtime"], dtype=np.float64)
        if len(order) != len(truth):
            raise SystemExit(f"{instance}: {len(order)} schedules in the log, {len(truth)} in "
                             "the file: the log and the datasets disagree (rewrite them?)")
        got = np.array([ns for _, ns in order], dtype=np.float64)
        scale = truth[0] / got[0]
        if not np.allclose(got * scale, truth, rtol=1e-6):
            raise SystemExit(f"{instance}: runtimes in the file are not the log's, in order")
        idx, later = [], []
        for i, (key, _) in enumerate(order):
            later_key = f"session|{session}|{key}"
            new = passes(recs, later_key, target, None, field) if later_key in recs else []
            if new:
                idx.append(i)
                later.append(min(new))
        if len(idx) < 2:
            continue
        sizes.append(len(idx))
        sub = truth[idx]

        both = np.sqrt(sub * np.asarray(later, dtype=np.float64))

        def score(cost):
            cost = np.asarray(cost, dtype=np.float64)
            return (tcost.kendall_tau(cost, sub), 1 + tcost.slowdown(cost, sub, 1),
                    1 + tcost.slowdown(cost, sub, 5), tcost.kendall_tau(cost, both),
                    1 + tcost.slowdown(cost, both, 1))

        instances.append(instance)
        rows[ceiling][0].append(score(later))
        seen = collections.Counter()
        for label, model in models:
            cost = model.predict(g, ast=t)  # each model reads the view(s) it needs
            rows[label][seen[label]].append(score(np.asarray(cost)[idx]))
            seen[label] += 1
    print(f"later run {session}; {len(sizes)} {a.split} programs, {min(sizes)}-{max(sizes)} "
          f"schedules each ({sum(sizes)} in all), scored against the shipped runtimes")
    print("| ranking | mean tau (± sd over checkpoints) | geomean slowdown@1 | geomean slowdown@5 "
          "| against both sessions pooled: mean tau | slowdown@1 |")
    print("|---|---|---|---|---|---|")
    for label, runs in rows.items():
        taus = [np.mean([x[0] for x in run]) for run in runs]
        sd = f" ± {np.std(taus):.3f}" if len(taus) > 1 else ""
        every = [x for run in runs for x in run]
        pooled = (f"{np.mean([np.mean([x[3] for x in run]) for run in runs]):.3f} | "
                  f"{geomean([x[4] for x in every]):.2f}x" if label != ceiling else "- | -")
        print(f"| {label} ({len(runs)}) | {np.mean(taus):.3f}{sd} | "
              f"{geomean([x[1] for x in every]):.2f}x | {geomean([x[2] for x in every]):.2f}x | "
              f"{pooled} |")
    print()
    print("per program (mean tau / geomean slowdown@1 over the label's checkpoints):")
    for i, instance in enumerate(instances):
        cells = [f"{label.split(':')[0]} {np.mean([run[i][0] for run in runs]):.2f} / "
                 f"{geomean([run[i][1] for run in runs]):.2f}x" for label, runs in rows.items()]
        print(f"  {instance}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
