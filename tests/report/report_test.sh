#!/usr/bin/env bash
# tcost report in a real browser: a report of every kind of input (the shipped model, its data
# and collection, and a tuning log of tcost, random search, the default and Mullapudi2016 made
# here with a tiny budget) is opened in headless Chromium. The console must show no error or
# warning, every plot must have rendered an SVG with marks, and a screenshot is saved.
# usage: report_test.sh TCOST PYTHON3 REPO OUT_DIR
set -euo pipefail
TCOST="$1"
PY="$2"
REPO="$3"
OUT="$4"
CHROMIUM="${CHROMIUM:-$(command -v chromium || true)}"
[ -n "$CHROMIUM" ] || { echo "chromium not found (scripts/install-deps.sh installs it)"; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$REPO"

fail() { echo "FAIL: $*"; exit 1; }

# Bad uses are clear errors, not crashes.
set +e
"$TCOST" report --out "$OUT/x.html" >"$OUT/err.txt" 2>&1
[ $? -eq 2 ] || fail "report without inputs: expected exit 2"
grep -q "at least one of" "$OUT/err.txt" || fail "no usage message: $(cat "$OUT/err.txt")"
TCOST_JS_DIR=/nonexistent "$TCOST" report --out "$OUT/x.html" --collect data/halide \
  >"$OUT/err.txt" 2>&1
[ $? -ne 0 ] || fail "a missing plotting library: expected an error"
grep -q "install-deps.sh" "$OUT/err.txt" || fail "the error does not say how to install: $(cat "$OUT/err.txt")"
[ ! -e "$OUT/x.html" ] || fail "a page was written without its library"
set -e

# The noise ceiling a page states comes from the manifest: the cross-session tau where a later
# run measured it, else the same-run tau, else "not measured" (a collection nothing measured
# again writes null figures; that once crashed the report).
noise_page() {  # noise_page NAME NOISE_JSON: the dataset paragraph of a collection with it
  local dir="$OUT/noise-$1"
  mkdir -p "$dir"
  head -n 300 data/halide/measurements.jsonl >"$dir/measurements.jsonl"
  printf '{"noise": %s, "noise_ceiling": {"kendall_tau": null}}\n' "$2" >"$dir/manifest.json"
  "$TCOST" report --out "$dir/page.html" --collect "$dir" >"$dir/out.txt" 2>&1 ||
    fail "report on a manifest with noise $2: $(cat "$dir/out.txt")"
  grep -o "Noise ceiling[^.]*[.][0-9]*" "$dir/page.html" || true
}
got=$(noise_page none '{"same_run_tau": null}')
[ "$got" = "Noise ceiling: not measured." ] || fail "null figures: got '$got'"
got=$(noise_page same '{"same_run_tau": 0.75, "cross_session_tau": null}')
[ "$got" = "Noise ceiling (same-run Kendall tau): 0.750" ] || fail "same-run only: got '$got'"
got=$(noise_page both '{"same_run_tau": 0.75, "cross_session_tau": 0.9}')
[ "$got" = "Noise ceiling (cross-session Kendall tau): 0.900" ] || fail "both: got '$got'"

# A small tuning run with a comparison, so that every section has data.
"$TCOST" tune --program softmax_512x512 --model models/tgraph-halide.pt --budget 3 \
  --compare default,random,mullapudi2016 --log "$OUT/tune.jsonl" --threads 1 >"$OUT/tune.txt"
"$TCOST" report --out "$OUT/report.html" --model models/tgraph-halide.pt --data data/halide/layout \
  --collect data/halide --tune-log "$OUT/tune.jsonl" --title "tcost report (test)" | tee "$OUT/report.txt"
grep -q "wrote $OUT/report.html" "$OUT/report.txt" || fail "no report written"
# The tune run's confirmations (tune.jsonl.confirm.jsonl) are no search: not a method's curve.
[ -s "$OUT/tune.jsonl.confirm.jsonl" ] || fail "the tune run wrote no confirmations"
if grep -q '"method":"confirm"' "$OUT/report.html"; then fail "confirmations plotted as a method"; fi

FLAGS=(--headless=new --no-sandbox --disable-gpu --no-first-run --hide-scrollbars
  --virtual-time-budget=60000 --user-data-dir="$OUT/profile")
timeout 180 "$CHROMIUM" "${FLAGS[@]}" --enable-logging=stderr --v=0 \
  --dump-dom "file://$OUT/report.html" >"$OUT/dom.html" 2>"$OUT/console.txt" || true
timeout 180 "$CHROMIUM" "${FLAGS[@]}" --window-size=1300,2400 \
  --screenshot="$OUT/report.png" "file://$OUT/report.html" >/dev/null 2>&1 || true

"$PY" - "$OUT" <<'PYEOF'
import re, sys
out = sys.argv[1]
console = [l for l in open(f"{out}/console.txt", errors="replace") if "CONSOLE" in l]
bad = [l for l in console if re.search(r"error|warn|uncaught", l, re.I)]
assert not bad, "console:\n" + "".join(bad)
dom = open(f"{out}/dom.html", errors="replace").read()
status = re.search(r'<p id="status"([^>]*)>', dom)
assert status, "no status element: the page did not load"
attrs = dict(re.findall(r'data-(\w+)="([^"]*)"', status.group(1)))
assert attrs["done"] == "1", f"rendering did not finish: {attrs}"
assert attrs["errors"] == "0", f"errors while rendering: {attrs}"
plots = int(attrs["plots"])
assert plots >= 9, f"expected every section's plots, found {plots}"
assert attrs["rendered"] == str(plots), f"{attrs['rendered']} of {plots} plots rendered"
for i in range(plots):
    m = re.search(rf'<div class="plot[^"]*" id="plot{i}"[^>]*>(.*?)</figure>', dom, re.S)
    assert m, f"plot {i}: no element"
    svg = m.group(1)
    assert "<svg" in svg, f"plot {i}: no SVG"
    marks = len(re.findall(r'role="graphics-symbol"', svg))
    assert marks > 0, f"plot {i}: an empty SVG"
png = open(f"{out}/report.png", "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50000, "no screenshot"
for section in ("Training", "Predictions", "Tuning", "Dataset"):
    assert f"<h2>{section}" in dom, f"section {section} missing"
for method in ("tcost", "random", "default", "mullapudi2016"):
    assert f'"method":"{method}"' in dom, f"tuning curve of {method} missing"
print(f"report: {plots} plots rendered, no console errors; screenshot {out}/report.png")
PYEOF
echo "report test passed"
