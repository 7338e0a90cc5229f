#!/usr/bin/env bash
# The best mean Kendall tau any model can reach on a synthetic dataset: the test graphs are
# written again without noise (same seed, so the same graphs and configurations), ranked by
# those noiseless runtimes into the competition CSV, and the ranking is scored against the
# noisy data with `tcost score`.
# usage: scripts/noise-ceiling.sh [DATA] [SEED]   (DATA written by tcost synth with defaults)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-out/synth-layout}
SEED=${2:-1}
CLEAN=$(mktemp -d)
trap 'rm -rf "$CLEAN"' EXIT
build/tcost synth --out "$CLEAN" --collection layout --seed "$SEED" --noise 0 >/dev/null
PY=/usr/bin/python3  # Debian's python3, which has python3-numpy
[ -x "$PY" ] || PY=python3
"$PY" - "$CLEAN/test" "$CLEAN/ranking.csv" <<'PY'
import glob, os, sys
import numpy as np
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.npz"))):
    order = np.argsort(np.load(f)["config_runtime"], kind="stable")
    rows.append(os.path.basename(f)[:-4] + "," + ";".join(map(str, order)))
open(sys.argv[2], "w").write("ID,TopConfigs\n" + "\n".join(rows) + "\n")
PY
build/tcost score --data "$DATA/test" --pred "$CLEAN/ranking.csv" | tail -1
