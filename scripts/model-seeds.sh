#!/usr/bin/env bash
# Every model on the shipped measured data over several seeds (the README's seed table): each
# model is trained with default options on data/halide (layout graphs; ast-gcn on the syntax
# trees) with seeds 0, 1 and 2, then scored on the test programs through the Python module:
# mean Kendall tau (mean over graphs, then mean ± sd over seeds) and geomean slowdown@1 and @5,
# per test family and overall, next to the data's noise ceilings from its manifest. Then the
# ensembles (`tcost ensemble`, standardised costs averaged) of each seed's models, scored from
# both views. An ensemble is MEMBER+MEMBER..., each member optionally MODEL*WEIGHT (default 1).
# The rows "..., seeds pooled" are one ensemble of every seed's members (no sd: one ensemble).
# The rows MODEL-final are the final fits of the syntax-tree models (--include-valid: trained on
# the training and validation programs together, all epochs, the last kept); MODEL-gap the same
# model with --loss hinge-gap, the syntax-tree models' default until 2026-12-07 (not in the
# default MODELS: name them, e.g. MODELS="... ast-gcn-final-gap tgraph-ast-final-gap").
# REUSE=1 keeps checkpoints already in out/model-seeds (trains only what is missing or unfinished; training:
# scripts/train-seeds.sh, scoring: scripts/test_scores.py). MODELS="tgraph xgb ..." takes a subset
# of the rows (and the ensembles all of whose members are in it); JOBS=2 trains two checkpoints
# at a time (each on one thread, so the checkpoints are the same as one at a time).
# SCORE_DATA=DIR scores on DIR's test programs and states DIR's noise figures (training always
# reads data/halide): e.g. a copy of the collection rewritten with --pool-sessions, whose test
# labels pool several sessions (REUSE=1 then only scores).
# usage: scripts/model-seeds.sh [SEEDS...]   (after scripts/build.sh; about 12 minutes before the
# final fits, which took 8-22 minutes each beside other trainings on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=("$@")
[ ${#SEEDS[@]} -gt 0 ] || SEEDS=(0 1 2)
OUT=out/model-seeds
mkdir -p "$OUT"
retrain=1  # train-seeds.sh keeps a checkpoint already there unless RETRAIN is set
[ -n "${REUSE:-}" ] && retrain=
read -r -a MODELS <<<"${MODELS:-gcn-baseline sage tgraph xgb xgb-ast ast-gcn tgraph-ast ast-gcn-final tgraph-ast-final}"
# One line per model; each training runs one thread, JOBS of them at a time.
for m in "${MODELS[@]}"; do echo "$m"; done |
  RETRAIN=$retrain xargs -P "${JOBS:-1}" -I{} bash scripts/train-seeds.sh {} "${SEEDS[@]}"
# only_trained ENSEMBLE...: those all of whose members are among MODELS.
only_trained() {
  local e m parts ok
  for e in "$@"; do
    ok=1
    IFS=+ read -r -a parts <<<"$e"
    for m in "${parts[@]}"; do
      [[ " ${MODELS[*]} " == *" ${m%\**} "* ]] || ok=
    done
    [ -n "$ok" ] && echo "$e"
  done
  return 0
}
mapfile -t ENSEMBLES < <(only_trained tgraph+xgb tgraph+ast-gcn "tgraph+ast-gcn*3" \
  tgraph+ast-gcn+xgb ast-gcn+xgb "ast-gcn*3+xgb" tgraph-ast+xgb tgraph-ast+ast-gcn \
  tgraph-ast-final+ast-gcn-final ast-gcn+xgb-ast tgraph-ast-final+ast-gcn-final+xgb-ast \
  "tgraph-ast-final+ast-gcn-final+xgb-ast*0.5" tgraph-ast-final-gap+ast-gcn-final-gap \
  tgraph-ast-final-avg20+ast-gcn-final-avg20)
mapfile -t POOLED < <(only_trained tgraph-ast-final+ast-gcn-final \
  "tgraph-ast-final+ast-gcn-final+xgb-ast*0.5" ast-gcn-final tgraph-ast-final-gap+ast-gcn-final-gap \
  tgraph-ast-final-avg20+ast-gcn-final-avg20)
# ensemble OUT ENSEMBLE SEED...: the members of ENSEMBLE (MODEL[*WEIGHT]+...) for every SEED.
ensemble() {
  local out=$1 e=$2 m s w
  shift 2
  local args=() parts
  IFS=+ read -r -a parts <<<"$e"
  for m in "${parts[@]}"; do
    w=1
    [[ "$m" == *"*"* ]] && w=${m#*\*}
    for s in "$@"; do args+=(--member "${m%\**}-$s.pt" --weight "$w"); done
  done
  build/tcost ensemble --out "$out" "${args[@]}" >/dev/null
}
for e in ${ENSEMBLES[@]+"${ENSEMBLES[@]}"}; do
  for s in "${SEEDS[@]}"; do ensemble "$OUT/$e-$s.ens" "$e" "$s"; done
done
for e in ${POOLED[@]+"${POOLED[@]}"}; do ensemble "$OUT/pooled-$e.ens" "$e" "${SEEDS[@]}"; done
PYTHONPATH=build/python:scripts /usr/bin/python3 - "$OUT" "${SCORE_DATA:-data/halide}" "${MODELS[@]}" \
  -- ${ENSEMBLES[@]+"${ENSEMBLES[@]}"} -- ${POOLED[@]+"${POOLED[@]}"} -- "${SEEDS[@]}" <<'PYEOF'
import json, sys
import numpy as np
from test_scores import family, geomean, score, test_views
out, data = sys.argv[1], sys.argv[2]
cut = sys.argv.index("--")
cut2 = sys.argv.index("--", cut + 1)
cut3 = sys.argv.index("--", cut2 + 1)
models, ensembles = sys.argv[3:cut], sys.argv[cut + 1:cut2]
pooled, seeds = sys.argv[cut2 + 1:cut3], sys.argv[cut3 + 1:]
noise = json.load(open(f"{data}/manifest.json"))["noise"]
views = test_views(data)
def per_family(path):
    """{family: ([tau], [s1], [s5])} of the checkpoint or ensemble file at path."""
    fam = {}
    for name, tau, s1, s5 in score(path, views):
        t = fam.setdefault(family(name), ([], [], []))
        t[0].append(tau)
        t[1].append(s1)
        t[2].append(s5)
    return fam
rows = {}  # per row, one per_family result per seed (one for a pooled ensemble)
for m in models + ensembles:
    rows[m] = [per_family(f"{out}/{m}-{s}." + ("ens" if "+" in m else "pt")) for s in seeds]
for e in pooled:
    rows[f"{e}, seeds pooled"] = [per_family(f"{out}/pooled-{e}.ens")]
fams = sorted(rows[models[0]][0])
def cell(per_seed, fs):
    taus = [np.mean([t for f in fs for t in ps[f][0]]) for ps in per_seed]
    s1 = geomean([x for ps in per_seed for f in fs for x in ps[f][1]])
    s5 = geomean([x for ps in per_seed for f in fs for x in ps[f][2]])
    sd = f" ± {np.std(taus):.3f}" if len(taus) > 1 else ""  # a pooled ensemble is one
    return f"{np.mean(taus):.3f}{sd} / {s1:.2f}x / {s5:.2f}x"
print(f"Seeds {', '.join(seeds)}; cells: mean test tau ± sd over seeds / geomean slowdown@1 / @5.")
def figure(key):  # a figure nothing has measured is null (or absent) in the manifest
    v = noise.get(key)
    return "not measured" if v is None else f"{v:.3f}"
print(f"Noise ceilings of the data: same-run tau {figure('same_run_tau')}, cross-session tau {figure('cross_session_tau')}.")
print()
print("| model | " + " | ".join(fams) + " | all test programs |")
print("|---|" + "---|" * (len(fams) + 1))
for m, per_seed in rows.items():
    print(f"| {m} | " + " | ".join(cell(per_seed, [f]) for f in fams) + f" | {cell(per_seed, fams)} |")
PYEOF
