"""Per-family figures of a k-fold run (scripts/kfold.sh): every family is a test family in
exactly one fold, so each setting's results cover every family once per seed. Prints one
markdown row per family (and a last row over all programs): for each setting, the mean
Kendall tau over the family's programs (mean ± sd over seeds) and the geomean slowdown@1 over
them and the seeds.
  PYTHONPATH=build/python /usr/bin/python3 scripts/kfold-families.py OUT SETTING... [--seeds 0 1 2]
OUT: the k-fold's work directory (KFOLD_OUT, default out/kfold), holding SETTING-FOLD-SEED.json."""
import json
import math
import os
import re
import statistics
import sys

from test_scores import family


def results(out, setting, seeds):
    """{seed: [per_graph entries of every fold]} of SETTING in OUT."""
    by_seed = {}
    for s in seeds:
        files = [f"{out}/{f}" for f in sorted(os.listdir(out))
                 if re.fullmatch(rf"{re.escape(setting)}-\d+-{s}\.json", f)]
        if not files:
            sys.exit(f"{out}: no results of {setting} for seed {s}")
        by_seed[s] = [g for f in files for g in json.load(open(f))["per_graph"]]
    return by_seed


def cell(graphs_by_seed, keep):
    """'tau ± sd / slowdown@1' over the graphs that keep() accepts."""
    taus, logs = [], []
    for graphs in graphs_by_seed.values():
        chosen = [g for g in graphs if keep(g["id"])]
        taus.append(statistics.mean(g["kendall_tau"] for g in chosen))
        logs += [math.log1p(g["slowdown_1"]) for g in chosen if g.get("slowdown_1") is not None]
    sd = statistics.pstdev(taus) if len(taus) > 1 else 0.0
    return f"{statistics.mean(taus):.3f} ± {sd:.3f} / {math.exp(statistics.mean(logs)):.2f}x"


def main(argv):
    seeds = ["0", "1", "2"]
    if "--seeds" in argv:
        i = argv.index("--seeds")
        seeds, argv = argv[i + 1:], argv[:i]
    if len(argv) < 2:
        sys.exit(__doc__)
    out, settings = argv[0], argv[1:]
    data = {s: results(out, s, seeds) for s in settings}
    first = next(iter(data[settings[0]].values()))
    families = sorted({family(g["id"]) for g in first})
    print("| family (programs) | " + " | ".join(settings) + " |")
    print("|---|" + "---|" * len(settings))
    for fam in families:
        n = sum(family(g["id"]) == fam for g in first)
        row = [cell(data[s], lambda name: family(name) == fam) for s in settings]
        print(f"| {fam} ({n}) | " + " | ".join(row) + " |")
    row = [cell(data[s], lambda name: True) for s in settings]
    print(f"| all {len(families)} families ({len(first)}), mean over programs | "
          + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
