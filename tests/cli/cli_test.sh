#!/usr/bin/env bash
# End-to-end checks of the tcost CLI: exit codes, JSON output, numpy-written files, scoring.
# usage: cli_test.sh TCOST PYTHON3
set -u
TCOST=$1
PY=$2
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0
fail=0
check() {  # check NAME EXPECTED_RC COMMAND...
  local name=$1 want=$2
  shift 2
  "$@" >"$W/out" 2>"$W/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $name: exit $rc, expected $want"
    head -5 "$W/out" "$W/err"
  fi
}
expect_in() {  # expect_in NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL: $1: '$3' not in $(head -c 400 "$2")"
  fi
}

# Usage errors exit 2.
check "no subcommand" 2 "$TCOST"
check "unknown flag" 2 "$TCOST" info --bogus x
check "bad collection" 2 "$TCOST" synth --out "$W/x" --collection nope
check "bad graphs" 2 "$TCOST" synth --out "$W/x" --graphs 0
expect_in "one line error" "$W/err" "graphs"
check "help" 0 "$TCOST" --help

# synth -> info
check "synth layout" 0 "$TCOST" synth --out "$W/lay" --graphs 6 --configs 20 --seed 3
check "synth tile" 0 "$TCOST" synth --out "$W/til" --collection tile --graphs 6 --configs 20
check "info json" 0 "$TCOST" info --json "$W/lay"
[ "$(wc -l <"$W/out")" -eq 6 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: info json lines"; }
"$PY" - "$W/out" <<'PY' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: info json keys"; }
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    assert j["collection"] == "layout" and j["configs"] == 20 and j["config_nodes"] > 0
    for k in ("file", "nodes", "edges", "configs", "config_nodes"):
        assert k in j, k
PY
check "info tile" 0 "$TCOST" info --json "$W/til/train"
expect_in "tile collection" "$W/out" '"collection":"tile"'
expect_in "tile config_nodes" "$W/out" '"config_nodes":0'

# numpy-written files, savez and savez_compressed, -1 and 0 padding
mkdir -p "$W/np"
"$PY" "$HERE/../scripts/write_tpugraphs.py" "$W/np"
check "info numpy" 0 "$TCOST" info "$W/np"
expect_in "numpy layout" "$W/out" "layout_compressed_zero_pad.npz"
expect_in "numpy tile" "$W/out" "tile_savez.npz"

# score: a perfect ranking (from true runtimes, via numpy) gives tau 1; reversed gives -1.
"$PY" - "$W/lay/test" "$W/perfect.csv" "$W/reversed.csv" <<'PY'
import glob, os, sys
import numpy as np
rows_p, rows_r = [], []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.npz"))):
    rt = np.load(f)["config_runtime"]
    order = np.argsort(rt, kind="stable")
    stem = os.path.basename(f)[:-4]
    rows_p.append(f"{stem},{';'.join(map(str, order))}")
    rows_r.append(f"{stem},{';'.join(map(str, order[::-1]))}")
open(sys.argv[2], "w").write("ID,TopConfigs\n" + "\n".join(rows_p) + "\n")
open(sys.argv[3], "w").write("ID,TopConfigs\n" + "\n".join(rows_r) + "\n")
PY
check "score perfect" 0 "$TCOST" score --data "$W/lay/test" --pred "$W/perfect.csv" --json
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert abs(j["mean_kendall_tau"]-1)<1e-9 and len(j["per_graph"])>0' "$W/out" \
  && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: perfect tau"; cat "$W/out"; }
check "score reversed" 0 "$TCOST" score --data "$W/lay/test" --pred "$W/reversed.csv" --json
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert abs(j["mean_kendall_tau"]+1)<1e-9' "$W/out" \
  && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: reversed tau"; cat "$W/out"; }
check "score text" 0 "$TCOST" score --data "$W/lay/test" --pred "$W/perfect.csv"
expect_in "score mean" "$W/out" "mean kendall_tau=1.0000"
printf 'ID,TopConfigs\nlayout_savez,1;3;0;2\nlayout_compressed_zero_pad,1;3;0;2\n' >"$W/np.csv"
check "score numpy files" 0 "$TCOST" score --data "$W/np/layout_savez.npz" --pred <(head -2 "$W/np.csv") --json
expect_in "numpy perfect" "$W/out" '"mean_kendall_tau":1.0'

# Bad input exits 1 with one line naming the problem.
printf 'not a zip' >"$W/bad.npz"
check "corrupt file" 1 "$TCOST" info "$W/bad.npz"
expect_in "corrupt names file" "$W/err" "bad.npz"
[ "$(wc -l <"$W/err")" -eq 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: one error line"; }
head -c 300 "$W/np/tile_savez.npz" >"$W/trunc.npz"
check "truncated file" 1 "$TCOST" info "$W/trunc.npz"
check "missing file" 1 "$TCOST" info "$W/none.npz"
printf 'ID,TopConfigs\nlayout_savez,1;3;9\n' >"$W/oor.csv"
check "out of range pred" 1 "$TCOST" score --data "$W/np/layout_savez.npz" --pred "$W/oor.csv"
expect_in "oor message" "$W/err" "out of range"

# The Halide collector: the zoo listing, bad flags, and one small program with 20 schedules that
# tcost info then reads (layout, tile and syntax-tree files).
check "collect list" 0 "$TCOST" collect --list
[ "$(wc -l <"$W/out")" -ge 60 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: 60 programs"; }
expect_in "collect list split" "$W/out" "attention_4x64x64"
check "collect no out" 2 "$TCOST" collect --pipelines matmul_192
check "collect no match" 2 "$TCOST" collect --out "$W/hal" --pipelines "nothing*"
check "collect bad remeasure" 2 "$TCOST" collect --out "$W/hal" --remeasure 2
check "collect small" 0 "$TCOST" collect --out "$W/hal" --pipelines matmul_192 --configs-per-graph 20
expect_in "collect summary" "$W/out" "measured 21"
check "collect info" 0 "$TCOST" info --json "$W/hal"
[ "$(grep -c '"configs":21' "$W/out")" -eq 3 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: 3 files of 21 configs"; cat "$W/out"; }
check "collect resume" 0 "$TCOST" collect --out "$W/hal" --pipelines matmul_192 --configs-per-graph 20
expect_in "collect resume summary" "$W/out" "measured 0, failed 0, already on record 21"
# --check compares each measured schedule's outputs with the default schedule's, and every
# record says so; a collection without it has no checked records.
check "collect checked" 0 "$TCOST" collect --out "$W/chk" --pipelines matmul_192 \
  --configs-per-graph 4 --no-ast --check
expect_in "collect checked summary" "$W/out" "measured 5, failed 0"
[ "$(grep -c '"checked":true' "$W/chk/measurements.jsonl")" -eq 5 ] &&
  [ "$(grep -c '"checked"' "$W/hal/measurements.jsonl")" -eq 0 ] && pass=$((pass + 1)) ||
  { fail=$((fail + 1)); echo "FAIL: checked records"; }
# --check-every-run checks after every timed run (the runs of a right schedule all pass) and
# its records say so.
check "collect checked every run" 0 "$TCOST" collect --out "$W/chk1" --pipelines matmul_192 \
  --configs-per-graph 2 --no-ast --check-every-run
expect_in "collect checked every run summary" "$W/out" "measured 3, failed 0"
[ "$(grep -c '"checked_every_run":true' "$W/chk1/measurements.jsonl")" -eq 3 ] &&
  [ "$(grep -c '"checked_every_run"' "$W/chk/measurements.jsonl")" -eq 0 ] &&
  pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: records checked every run"; }

# Models: train (every model name the CLI lists is accepted; a wrong one is a usage error),
# eval with JSON, rank into the competition CSV, and score that file.
check "train bad model" 2 "$TCOST" train --data "$W/lay" --model nope --out "$W/m.pt"
check "train tgraph" 0 "$TCOST" train --data "$W/lay" --model tgraph --out "$W/tg.pt" --epochs 2 --quiet
check "train xgb" 0 "$TCOST" train --data "$W/lay" --model xgb --out "$W/xgb.pt" --epochs 2 --quiet
check "train include valid" 0 "$TCOST" train --data "$W/lay" --model sage --out "$W/iv.pt" \
  --epochs 2 --include-valid --threads 1
expect_in "include valid says" "$W/out" "no validation: epoch 2 kept"
check "include valid not xgb" 2 "$TCOST" train --data "$W/lay" --model xgb --out "$W/ivx.pt" \
  --include-valid
check "eval json" 0 "$TCOST" eval --model "$W/tg.pt" --data "$W/lay" --split test --json
expect_in "eval tau" "$W/out" '"mean_kendall_tau"'
check "eval bad checkpoint" 1 "$TCOST" eval --model "$W/bad.npz" --data "$W/lay" --split test
check "rank csv" 0 "$TCOST" rank --model "$W/xgb.pt" --graph "$W/lay/test" --csv "$W/rank.csv"
expect_in "rank header" "$W/rank.csv" "ID,TopConfigs"
check "score ranked" 0 "$TCOST" score --data "$W/lay/test" --pred "$W/rank.csv" --json
expect_in "score ranked tau" "$W/out" '"mean_kendall_tau"'
check "ensemble" 0 "$TCOST" ensemble --out "$W/ens.json" --member tg.pt --member xgb.pt
check "eval ensemble" 0 "$TCOST" eval --model "$W/ens.json" --data "$W/lay" --split test --json
expect_in "eval ensemble tau" "$W/out" '"mean_kendall_tau"'
check "ensemble missing member" 1 "$TCOST" ensemble --out "$W/ens2.json" --member absent.pt
check "ensemble bad weight" 2 "$TCOST" ensemble --out "$W/ens2.json" --member tg.pt --weight 0
check "rank top" 0 "$TCOST" rank --model "$W/tg.pt" --graph "$W/lay/test" --top 3
[ "$(awk '{print NF}' "$W/out" | sort -u)" = "4" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: rank --top 3"; cat "$W/out"; }

# Tuning a zoo program with the shipped model, beside random search and an autoscheduler: every
# method ran and was measured, then confirmed twice in fresh processes (its runtime their
# median); tcost beat or matched the default; a rerun with the same log measures nothing new for
# tcost (and without confirmations reports the search's best); a model of another collection is
# refused.
MODEL="$HERE/../../models/tgraph-halide.pt"
check "tune" 0 "$TCOST" tune --program matmul_192 --model "$MODEL" --budget 6 \
  --compare default,random,mullapudi2016 --log "$W/tune.jsonl" --json --confirm 2
cp "$W/out" "$W/tune1.json"
"$PY" - "$W/tune1.json" <<'EOF2' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: tune json"; cat "$W/tune1.json"; }
import json, sys
j = json.load(open(sys.argv[1]))
m = {r["method"]: r for r in j["programs"][0]["methods"]}
assert list(m) == ["default", "random", "mullapudi2016", "tcost"], list(m)
assert all(r["ok"] for r in m.values()), m
assert m["tcost"]["runtime_ms"] <= m["default"]["runtime_ms"], m
assert 1 <= m["tcost"]["measurements"] <= 6 and m["random"]["measurements"] <= 6, m
for r in m.values():
    assert len(r["confirm_ms"]) == 2 and r["search_runtime_ms"] > 0, r
    assert abs(r["runtime_ms"] - sum(r["confirm_ms"]) / 2) < 1e-9, r
EOF2
[ "$(grep -c '"round":2' "$W/tune.jsonl.confirm.jsonl")" -eq 4 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: confirmation log"; }
[ "$(grep -c '"checked":true' "$W/tune.jsonl")" -ge 2 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: tuning log"; }
# The returned schedule was verified: outputs checked, compiled with Halide's bounds asserts.
[ "$(grep '"key":"verify-bounds|matmul_192|' "$W/tune.jsonl" | grep '"bounds_checked":true' | grep -c '"ok":true')" -ge 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: tuning log verification"; }
check "tune rerun" 0 "$TCOST" tune --program matmul_192 --model "$MODEL" --budget 6 \
  --log "$W/tune.jsonl" --json --confirm 0
expect_in "tune rerun reuses" "$W/out" '"measurements":0'
expect_in "tune rerun unconfirmed" "$W/out" '"confirm_ms":[]'
# --finalists 3 on the same log: nothing new is searched, the three fastest are measured once
# more each ("final|" records), and the single fastest run's schedule is confirmed beside
# tcost's choice as "tcost-fastest-run" (sharing tcost's confirmations when it is the same).
check "tune finalists" 0 "$TCOST" tune --program matmul_192 --model "$MODEL" --budget 6 \
  --finalists 3 --log "$W/tune.jsonl" --json --confirm 2
"$PY" - "$W/out" "$W/tune.jsonl" <<'EOF2' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: tune finalists"; cat "$W/out"; }
import json, sys
j = json.load(open(sys.argv[1]))
m = {r["method"]: r for r in j["programs"][0]["methods"]}
assert list(m) == ["tcost", "tcost-fastest-run"] and all(r["ok"] for r in m.values()), m
assert m["tcost"]["measurements"] == 0, m
assert all(len(r["confirm_ms"]) == 2 for r in m.values()), m
recs = [json.loads(line) for line in open(sys.argv[2])]
final = [r for r in recs if r["key"].startswith("final|")]
assert len(final) == 3 and all(r["pass"] == 2 and r["checked"] for r in final), final
EOF2
# Under collect's other protocol (--arena --pin-threads) every method measures alike, its
# outputs still checked, and every record of the three logs says so (the default protocol's say
# nothing: the first tuning's).
check "tune arena pinned" 0 "$TCOST" tune --program matmul_192 --model "$MODEL" --budget 3 \
  --compare default,mullapudi2016 --arena --pin-threads --log "$W/tune6.jsonl" --json --confirm 1
"$PY" - "$W/out" "$W/tune6.jsonl" "$W/tune.jsonl" <<'EOF2' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: tune arena pinned"; cat "$W/out"; }
import json, sys
j = json.load(open(sys.argv[1]))
m = {r["method"]: r for r in j["programs"][0]["methods"]}
assert list(m) == ["default", "mullapudi2016", "tcost"] and all(r["ok"] for r in m.values()), m
logs = [sys.argv[2] + s for s in ("", ".default.jsonl", ".mullapudi2016.jsonl", ".confirm.jsonl")]
recs = [json.loads(line) for f in logs for line in open(f)]
assert len(recs) >= 6 and all(r.get("placement") == "arena" and r.get("pinned") for r in recs)
assert sum(r.get("checked", False) for r in recs) >= 2
assert not any("placement" in json.loads(line) or "pinned" in json.loads(line)
               for line in open(sys.argv[3]))
EOF2
check "tune tile model" 1 "$TCOST" tune --program matmul_192 --model "$W/xgb.pt" --budget 2 \
  --log "$W/tune2.jsonl"
check "tune no program" 2 "$TCOST" tune --program "nothing*" --model "$MODEL" --log "$W/t3.jsonl"
# An ensemble of layout models tunes like one model (the shipped model twice: its ranking).
check "tune ensemble" 0 "$TCOST" ensemble --out "$W/ens-shipped.json" --member "$MODEL" \
  --member "$MODEL" --weight 2 --weight 1
check "tune with ensemble" 0 "$TCOST" tune --program matmul_192 --model "$W/ens-shipped.json" \
  --budget 4 --log "$W/tune4.jsonl" --json --confirm 0
# A model that reads syntax trees tunes in two stages: the shipped layout model ranks the
# candidates, the trees of its best are lowered and ranked again (an ast-gcn trained briefly on
# the collection above); without a layout model first it is refused, and a layout model needs
# none.
check "train ast-gcn" 0 "$TCOST" train --data "$W/hal/ast" --model ast-gcn --epochs 2 \
  --out "$W/ast.pt" --threads 1
check "train ast-gcn work pool" 0 "$TCOST" train --data "$W/hal/ast" --model ast-gcn --epochs 1 \
  --work-pool --out "$W/ast-wp.pt" --threads 1
expect_in "work pool kept" "$W/ast-wp.pt" '"work_pool":true'
expect_in "ast-gcn pools by work by default" "$W/ast.pt" '"work_pool":true'
check "train ast-gcn no work pool" 0 "$TCOST" train --data "$W/hal/ast" --model ast-gcn \
  --epochs 1 --work-pool --no-work-pool --out "$W/ast-nwp.pt" --threads 1
expect_in "no work pool kept" "$W/ast-nwp.pt" '"work_pool":false'
check "work pool reads trees" 2 "$TCOST" train --data "$W/hal/layout" --model tgraph --epochs 1 \
  --work-pool --out "$W/wp.pt" --threads 1
expect_in "work pool says" "$W/err" "--work-pool reads syntax trees"
# xgb trains apart from the networks; the options it lacks are refused all the same.
check "work pool for xgb" 2 "$TCOST" train --data "$W/hal/ast" --model xgb --work-pool \
  --out "$W/wpx.json" --threads 1
expect_in "work pool for xgb says" "$W/err" "--work-pool reads syntax trees: not a xgb option"
check "config pool for xgb" 2 "$TCOST" train --data "$W/hal/layout" --model xgb --config-pool \
  --out "$W/cpx.json" --threads 1
expect_in "config pool for xgb says" "$W/err" "--config-pool is a tgraph option, not xgb's"
check "train ast-gcn dropout" 0 "$TCOST" train --data "$W/hal/ast" --model ast-gcn --epochs 1 \
  --dropout 0.2 --out "$W/ast-do.pt" --threads 1
expect_in "dropout kept" "$W/ast-do.pt" '"dropout":0.2'
check "dropout for tgraph" 2 "$TCOST" train --data "$W/hal/layout" --model tgraph --epochs 1 \
  --dropout 0.1 --out "$W/do.pt" --threads 1
expect_in "dropout says" "$W/err" "--dropout is an ast-gcn and tgraph-ast option"
check "dropout of one" 2 "$TCOST" train --data "$W/hal/ast" --model ast-gcn --epochs 1 \
  --dropout 1 --out "$W/do.pt" --threads 1
check "tune trees alone" 1 "$TCOST" tune --program matmul_192 --model "$W/ast.pt" --budget 2 \
  --log "$W/tune5.jsonl"
expect_in "tune trees alone says" "$W/err" "--prerank"
check "tune layout prerank" 2 "$TCOST" tune --program matmul_192 --model "$MODEL" \
  --prerank "$MODEL" --budget 2 --log "$W/tune5.jsonl"
check "tune two stages" 0 "$TCOST" tune --program matmul_192 --model "$W/ast.pt" \
  --prerank "$MODEL" --rerank 16 --per-round 3 --budget 4 --log "$W/tune5.jsonl" --json \
  --confirm 0
expect_in "tune two stages measured" "$W/out" '"measurements":4'
[ "$(grep -c '"checked":true' "$W/tune5.jsonl")" -ge 4 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: two-stage tuning log"; }
# Ranking with a model that reads both views: an ensemble of the shipped layout model and the
# ast-gcn above needs the syntax trees (--ast: a file beside a file, a directory beside a
# directory); it refuses a graph alone, trees of other configurations and --graph naming trees.
# With --ast, ast-gcn alone ranks the layout file's program exactly as from its trees.
HL=$(ls "$W"/hal/layout/*/matmul_192.npz)
HA=${HL/\/layout\//\/ast\/}
check "rank ensemble" 0 "$TCOST" ensemble --out "$W/ens-two.json" --member "$MODEL" --member "$W/ast.pt"
check "rank two views alone" 1 "$TCOST" rank --model "$W/ens-two.json" --graph "$HL"
expect_in "rank two views says" "$W/err" "--ast"
check "rank two views" 0 "$TCOST" rank --model "$W/ens-two.json" --graph "$HL" --ast "$HA" --top 3
[ "$(awk '{print NF}' "$W/out")" = "4" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: rank two views --top 3"; cat "$W/out"; }
check "rank two views dirs" 0 "$TCOST" rank --model "$W/ens-two.json" --graph "$(dirname "$HL")" \
  --ast "$(dirname "$HA")" --csv "$W/rank2.csv"
expect_in "rank two views csv" "$W/rank2.csv" "matmul_192,"
check "rank dir with ast file" 2 "$TCOST" rank --model "$W/ens-two.json" --graph "$(dirname "$HL")" \
  --ast "$HA"
check "rank ast as graph" 2 "$TCOST" rank --model "$W/ens-two.json" --graph "$HA" --ast "$HA"
check "synth trees" 0 "$TCOST" synth --out "$W/sast" --collection ast --graphs 3 --configs 20 --seed 1
check "rank other trees" 1 "$TCOST" rank --model "$W/ens-two.json" --graph "$HL" \
  --ast "$(find "$W/sast" -name "*.npz" | sort | head -1)"
expect_in "rank other trees says" "$W/err" "not the same configurations"
check "rank trees of ast-gcn" 0 "$TCOST" rank --model "$W/ast.pt" --graph "$HA"
cp "$W/out" "$W/rank-trees"
check "rank ast-gcn with --ast" 0 "$TCOST" rank --model "$W/ast.pt" --graph "$HL" --ast "$HA"
cmp -s "$W/out" "$W/rank-trees" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: ast-gcn ranks the same with --ast"; }
# XGBoost trained on the syntax trees (TVM's features of the loop nest) reads trees only: it
# ranks them, from --ast exactly as from the trees, refuses a layout graph alone, and joins an
# ensemble with ast-gcn.
check "train xgb on trees" 0 "$TCOST" train --data "$W/hal/ast" --model xgb --epochs 2 \
  --out "$W/xgb-ast.pt" --threads 1
check "rank trees of xgb" 0 "$TCOST" rank --model "$W/xgb-ast.pt" --graph "$HA"
cp "$W/out" "$W/rank-xgb-trees"
check "rank xgb with --ast" 0 "$TCOST" rank --model "$W/xgb-ast.pt" --graph "$HL" --ast "$HA"
cmp -s "$W/out" "$W/rank-xgb-trees" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: xgb on trees ranks the same with --ast"; }
check "rank xgb on trees without trees" 1 "$TCOST" rank --model "$W/xgb-ast.pt" --graph "$HL"
expect_in "rank xgb without trees says" "$W/err" "syntax trees"
check "ensemble ast-gcn and xgb on trees" 0 "$TCOST" ensemble --out "$W/ens-trees.json" \
  --member "$W/ast.pt" --member "$W/xgb-ast.pt" --weight 1 --weight 0.5
check "rank trees ensemble" 0 "$TCOST" rank --model "$W/ens-trees.json" --graph "$HA" --top 2

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
