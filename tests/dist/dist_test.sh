#!/usr/bin/env bash
# Distributed training on loopback (docs/distributed.md):
#   1. equivalence: 2 processes with --batch-graphs 2 give the per-epoch losses of 1 process with
#      --batch-graphs 2 (relative 1e-3) and its validation tau (0.005);
#   2. resume: a 2-process run stopped after one epoch and resumed ends where an uninterrupted
#      one does;
#   3. a killed worker: the survivor ends within --dist-timeout with an error naming the lost
#      rank (also when a library thread throws where nothing catches it), and `tcost launch` stops the others and exits non-zero when one of its processes dies;
#   4. bad uses: xgb under WORLD_SIZE > 1, --batch-graphs not a multiple of WORLD_SIZE.
# usage: dist_test.sh TCOST PYTHON3 OUT_DIR
set -euo pipefail
TCOST="$1"
PY="$2"
OUT="$3"
rm -rf "$OUT" && mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }

"$TCOST" synth --out "$OUT/data" --collection layout --graphs 30 --configs 40 --seed 3 \
  --min-nodes 8 --max-nodes 30 >/dev/null
COMMON=(--data "$OUT/data" --model tgraph --epochs 3 --batch-graphs 2 --threads 1 --seed 5
  --hidden 32 --quiet --dist-timeout 30)

# 1. Equivalence.
"$TCOST" train "${COMMON[@]}" --out "$OUT/w1.pt"
"$TCOST" launch --nproc 2 -- train "${COMMON[@]}" --out "$OUT/w2.pt"
[ ! -e "$OUT/w2.pt.rank1" ] || fail "rank 1 wrote a checkpoint"

# 2. Resume: one epoch, then the rest.
"$TCOST" launch --nproc 2 -- train "${COMMON[@]}" --out "$OUT/r2.pt" --stop-after 1
"$TCOST" launch --nproc 2 -- train "${COMMON[@]}" --out "$OUT/r2.pt" --resume

"$PY" - "$OUT" <<'PYEOF'
import json, sys
out = sys.argv[1]
def log(name):
    return [json.loads(l) for l in open(f"{out}/{name}.pt.log.jsonl")]
w1, w2, r2 = log("w1"), log("w2"), log("r2")
assert len(w1) == len(w2) == 3 and len(r2) == 3, (len(w1), len(w2), len(r2))
for a, b, c in zip(w1, w2, r2):
    rel = abs(a["train_loss"] - b["train_loss"]) / abs(a["train_loss"])
    assert rel <= 1e-3, f"epoch {a['epoch']}: loss {a['train_loss']} (1 process) vs {b['train_loss']} (2): {rel:.2e}"
    assert abs(a["valid_metric"] - b["valid_metric"]) <= 0.005, (a, b)
    assert a["step"] == b["step"], (a["step"], b["step"])
    assert b["world_size"] == 2 and "allreduce_seconds" in b
    rel = abs(c["train_loss"] - b["train_loss"]) / abs(b["train_loss"])
    assert rel <= 1e-3, f"resumed epoch {c['epoch']}: {c['train_loss']} vs {b['train_loss']}"
    print(f"epoch {a['epoch']}: loss {a['train_loss']:.6f} / {b['train_loss']:.6f} / resumed "
          f"{c['train_loss']:.6f}; valid {a['valid_metric']:.4f} / {b['valid_metric']:.4f}")
PYEOF

# 3. Killed processes. LONG trains long enough to be killed mid-run: 500 epochs of 0.05-0.1 s,
# no early stopping (which ended it after about 30 epochs, 2-3 s: sooner than a fault in one
# rank is reported, which takes the 2.5 s of looking for the lost ranks, so the other rank
# could finish cleanly and exit 0).
LONG=(--data "$OUT/data" --model tgraph --epochs 500 --patience 1000 --batch-graphs 2 --threads 1
  --seed 5 --hidden 32 --quiet --dist-timeout 20 --out "$OUT/k.pt")
first_epoch() {  # waits until rank 0 logged an epoch
  for _ in $(seq 1 600); do
    [ -s "$OUT/k.pt.log.jsonl" ] && return 0
    sleep 0.1
  done
  fail "no epoch finished"
}
# Waits for process $1 (at most the test's timeout); sets RC and ELAPSED.
await() {
  local start
  start=$(date +%s)
  set +e
  wait "$1"
  RC=$?
  set -e
  ELAPSED=$(( $(date +%s) - start ))
}
# Two ranks started by hand (no launcher); rank $1 is killed, rank $2 must end within the
# timeout with an error naming rank $1.
kill_rank() {
  local victim=$1 survivor=$2 port
  rm -f "$OUT/k.pt"*
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  local pids=()
  for r in 0 1; do
    WORLD_SIZE=2 RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$TCOST" train "${LONG[@]}" \
      >"$OUT/k$r.out" 2>"$OUT/k$r.err" &
    pids+=($!)
  done
  first_epoch
  kill -9 "${pids[$victim]}"
  await "${pids[$survivor]}"
  wait "${pids[$victim]}" 2>/dev/null || true
  echo "rank $survivor ended $ELAPSED s after rank $victim was killed (exit $RC): $(cat "$OUT/k$survivor.err")"
  [ "$RC" -eq 1 ] || fail "rank $survivor exited $RC after losing rank $victim (expected the error exit 1)"
  [ "$ELAPSED" -le 40 ] || fail "rank $survivor took $ELAPSED s (timeout 20 s)"
  grep -q "lost rank $victim" "$OUT/k$survivor.err" || fail "the error does not name rank $victim"
}
kill_rank 1 0
kill_rank 0 1  # rank 0 serves the store

# A library thread that throws where nothing catches it (LibTorch's store threads can, when a
# peer dies; TCOST_DIST_FAULT=thread injects one in rank 1): an error and exit 1, not SIGABRT.
rm -f "$OUT/k.pt"*
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$TCOST" train "${LONG[@]}" \
  >"$OUT/t0.out" 2>"$OUT/t0.err" &
T0=$!
WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port TCOST_DIST_FAULT=thread \
  "$TCOST" train "${LONG[@]}" >"$OUT/t1.out" 2>"$OUT/t1.err" &
T1=$!
await $T1
echo "rank 1 ended (exit $RC) after the injected fault: $(cat "$OUT/t1.err")"
[ "$RC" -eq 1 ] || fail "rank 1 exited $RC after an uncaught exception in a thread (expected 1)"
grep -q "tcost: error: distributed training (rank 1): .*injected by TCOST_DIST_FAULT" \
  "$OUT/t1.err" || fail "rank 1's error: $(cat "$OUT/t1.err")"
await $T0
[ "$RC" -eq 1 ] || fail "rank 0 exited $RC after losing rank 1 (expected 1)"
grep -q "lost rank 1" "$OUT/t0.err" || fail "rank 0's error: $(cat "$OUT/t0.err")"

# The launcher: one of its processes killed -> the others stopped, exit non-zero.
rm -f "$OUT/k.pt"*
"$TCOST" launch --nproc 2 -- train "${LONG[@]}" >"$OUT/l.out" 2>"$OUT/l.err" &
L=$!
first_epoch
CHILD=$(pgrep -P $L | tail -1)
[ -n "$CHILD" ] || fail "launch has no children"
kill -9 "$CHILD"
await $L
echo "launch ended $ELAPSED s after one process was killed (exit $RC)"
[ $RC -ne 0 ] || fail "launch exited 0"
[ $ELAPSED -le 40 ] || fail "launch took $ELAPSED s"
grep -q "was killed by signal 9; stopping the others" "$OUT/l.err" || fail "launch: $(cat "$OUT/l.err")"
[ -z "$(pgrep -P $L)" ] || fail "launch left processes behind"

# 4. Bad uses.
set +e
WORLD_SIZE=2 RANK=0 MASTER_PORT=1 "$TCOST" train --data "$OUT/data" --model xgb --out "$OUT/x.json" \
  >/dev/null 2>"$OUT/x.err"
[ $? -eq 2 ] || fail "xgb under WORLD_SIZE=2: expected a usage error"
grep -q "xgb does not train distributed" "$OUT/x.err" || fail "xgb: $(cat "$OUT/x.err")"
WORLD_SIZE=2 RANK=0 MASTER_PORT=1 "$TCOST" train "${COMMON[@]}" --batch-graphs 3 --out "$OUT/b.pt" \
  >/dev/null 2>"$OUT/b.err"
[ $? -eq 2 ] || fail "--batch-graphs 3 with WORLD_SIZE=2: expected a usage error"
WORLD_SIZE=2 "$TCOST" train "${COMMON[@]}" --out "$OUT/b.pt" >/dev/null 2>"$OUT/b.err"
[ $? -eq 2 ] || fail "WORLD_SIZE without RANK: expected a usage error"
set -e
echo "distributed test passed"
