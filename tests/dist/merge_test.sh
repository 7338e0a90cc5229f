#!/usr/bin/env bash
# Sharded collection: two shards of three programs, merged, give the record set and the dataset
# files of one unsharded collection of the same programs (runtimes aside); shards of another
# machine are refused unless --allow-mixed (docs/distributed.md).
# usage: merge_test.sh TCOST PYTHON3 OUT_DIR
set -euo pipefail
TCOST="$1"
PY="$2"
OUT="$3"
rm -rf "$OUT" && mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }
ARGS=(--pipelines 'matmul_*' --configs-per-graph 3 --seed 4 --threads 1 --workers 1)

"$TCOST" collect --out "$OUT/one" "${ARGS[@]}" >/dev/null
"$TCOST" collect --out "$OUT/s0" "${ARGS[@]}" --shard 0/2 >/dev/null
"$TCOST" collect --out "$OUT/s1" "${ARGS[@]}" --shard 1/2 >/dev/null
"$TCOST" merge "$OUT/s0" "$OUT/s1" --out "$OUT/merged" | tee "$OUT/merge.txt"
grep -q "0 duplicates" "$OUT/merge.txt" || fail "unexpected duplicates"

"$PY" - "$OUT" <<'PYEOF'
import json, os, sys
import numpy as np
out = sys.argv[1]
def records(d):
    return [json.loads(l) for l in open(f"{out}/{d}/measurements.jsonl")]
one, s0, s1, merged = (records(d) for d in ("one", "s0", "s1", "merged"))
p0 = {r["instance"] for r in s0}
p1 = {r["instance"] for r in s1}
assert p0 and p1 and not (p0 & p1), f"shards overlap or one is empty: {p0} {p1}"
assert p0 | p1 == {r["instance"] for r in one}, (p0, p1)
assert sorted(r["key"] for r in merged) == sorted(r["key"] for r in one), "record keys differ"
assert all(r["ok"] for r in one + merged), "a measurement failed: the comparison needs all"
files = []
for root, _, names in os.walk(f"{out}/one"):
    files += [os.path.relpath(os.path.join(root, n), f"{out}/one") for n in names if n.endswith(".npz")]
mfiles = []
for root, _, names in os.walk(f"{out}/merged"):
    mfiles += [os.path.relpath(os.path.join(root, n), f"{out}/merged") for n in names if n.endswith(".npz")]
assert sorted(files) == sorted(mfiles) and files, (sorted(files), sorted(mfiles))
for f in files:
    a, b = np.load(f"{out}/one/{f}"), np.load(f"{out}/merged/{f}")
    assert sorted(a.files) == sorted(b.files), f
    for k in a.files:
        if "runtime" in k:
            assert a[k].shape == b[k].shape, (f, k)
            continue
        assert np.array_equal(a[k], b[k]), f"{f}: {k} differs"
m = json.load(open(f"{out}/merged/manifest.json"))
assert m["merged"]["records"] == len(merged) and "shard" not in m["protocol"], m.get("merged")
assert m["counts"]["measurements_first_pass"] == len(one)
print(f"merge: {len(merged)} records, {len(files)} dataset files equal to the unsharded ones")
PYEOF

# Another machine's shard is refused, and accepted with --allow-mixed.
cp -r "$OUT/s1" "$OUT/other"
"$PY" - "$OUT/other/manifest.json" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1])); m["machine"]["cpu"] = "Another CPU"
json.dump(m, open(sys.argv[1], "w"))
PYEOF
set +e
"$TCOST" merge "$OUT/s0" "$OUT/other" --out "$OUT/mixed" >"$OUT/mixed.txt" 2>&1
RC=$?
set -e
[ $RC -eq 1 ] || fail "mixed shards: expected exit 1, got $RC"
grep -q "allow-mixed" "$OUT/mixed.txt" || fail "no hint: $(cat "$OUT/mixed.txt")"
rm -rf "$OUT/mixed"
"$TCOST" merge "$OUT/s0" "$OUT/other" --out "$OUT/mixed" --allow-mixed >/dev/null
set +e
"$TCOST" merge "$OUT/s0" "$OUT/s1" --out "$OUT/mixed" >/dev/null 2>&1
[ $? -eq 1 ] || fail "merging into a directory that holds measurements must be refused"
"$TCOST" collect --out "$OUT/x" "${ARGS[@]}" --shard 2/2 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--shard 2/2: expected a usage error"
set -e
echo "merge test passed"
