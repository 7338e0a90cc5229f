#!/usr/bin/env bash
# tcost's model benchmark beside the Python reference (scripts/bench-python.py), side by side:
# ROUNDS rounds (default 3), each running both on the same exported graph and weights, the
# order alternating between rounds. Python runs twice a round: as it starts by default, and
# with OPENBLAS_CORETYPE set to the kernels tcost runs (tcost sets it for itself, core/blas.h;
# a Python user would have to). Prints a markdown table of per-round figures and the median
# ratios. Needs Debian's python3-torch (apt-get install python3-torch) and a build.
#   bash scripts/bench-vs-python.sh [ROUNDS] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
out=${2:-out/bench-python}
tcost=${TCOST:-build/tcost}
py=/usr/bin/python3
repeats=${REPEATS:-5}
"$py" -c 'import torch, numpy' 2>/dev/null ||
  { echo "bench-vs-python: needs Debian's python3-torch and python3-numpy" >&2; exit 1; }
python_runs() {  # DIR: default kernels, then tcost's
  local core
  core=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["openblas_core"])' \
    "$1/tgraph.json")
  env -u OPENBLAS_CORETYPE "$py" scripts/bench-python.py "$1" --repeats "$repeats" \
    --json "$1/python.json" > "$1.python.txt"
  OPENBLAS_CORETYPE=$core "$py" scripts/bench-python.py "$1" --repeats "$repeats" \
    --json "$1/python-same-kernels.json" > "$1.python-same-kernels.txt"
}
if [[ -z ${SUMMARY_ONLY:-} ]]; then  # SUMMARY_ONLY=1: only the tables, from an earlier run
rm -rf "$out" && mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  dir="$out/round$r"
  if (( r % 2 == 1 )); then
    "$tcost" bench --models-only --repeats "$repeats" --export "$dir" > "$dir.tcost.txt"
    python_runs "$dir"
  else
    # Python first this round: it reads the previous round's export (the same graph and
    # weights: the benchmark is seeded), then tcost writes its own.
    mkdir -p "$dir" && cp "$out/round$((r - 1))"/*.npz "$out/round$((r - 1))"/*.json "$dir"/
    rm -f "$dir"/python*.json
    python_runs "$dir"
    "$tcost" bench --models-only --repeats "$repeats" --export "$dir" > "$dir.tcost.txt"
  fi
done
fi
"$py" - "$out" "$rounds" <<'PY'
import json, pathlib, statistics, sys
out, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
rows = {}
for r in range(1, rounds + 1):
    d = out / f"round{r}"
    same = {p["model"]: p for p in json.loads((d / "python-same-kernels.json").read_text())}
    for py in json.loads((d / "python.json").read_text()):
        t = json.loads((d / f"{py['model']}.json").read_text())
        rows.setdefault(py["model"], []).append((r, t, py, same[py["model"]]))
core = rows["tgraph"][0][1]["openblas_core"]
print(f"Inference in configurations/s; train step of K=32 in ms. Python: default = as it starts "
      f"(OpenBLAS picks its own kernels), same = OPENBLAS_CORETYPE={core}, as tcost runs.")
print()
print("| model | round | tcost inference | tcost reference formulation | Python default | Python same kernels | tcost train step | tcost reference formulation | Python default | Python same kernels |")
print("|---|---|---|---|---|---|---|---|---|---|")
summary = []
for model, items in rows.items():
    inf_d, inf_s, st_d, st_s = [], [], [], []
    for r, t, py, ps in items:
        c = t["configs"]
        inf_d.append(py["inference_s"] / t["inference_s"])
        inf_s.append(ps["inference_s"] / t["inference_s"])
        st_d.append(py["train_step_s"] / t["train_step_s"])
        st_s.append(ps["train_step_s"] / t["train_step_s"])
        print(f"| {model} | {r} | {c / t['inference_s']:.0f} | {c / t['reference_inference_s']:.0f} | "
              f"{c / py['inference_s']:.0f} | {c / ps['inference_s']:.0f} | "
              f"{t['train_step_s'] * 1e3:.1f} | {t['reference_train_step_s'] * 1e3:.1f} | "
              f"{py['train_step_s'] * 1e3:.1f} | {ps['train_step_s'] * 1e3:.1f} |")
    summary.append((model, inf_d, inf_s, st_d, st_s))
print()
print("Speed of tcost over Python (Python's time / tcost's time; > 1: tcost faster), median and "
      "range over rounds:")
print()
print("| model | inference vs Python default | inference vs Python same kernels | train step vs Python default | train step vs Python same kernels |")
print("|---|---|---|---|---|")
fmt = lambda v: f"{statistics.median(v):.2f}x ({min(v):.2f}-{max(v):.2f})"
for m, a, b, c, d in summary:
    print(f"| {m} | {fmt(a)} | {fmt(b)} | {fmt(c)} | {fmt(d)} |")
PY
