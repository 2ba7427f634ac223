#!/usr/bin/env bash
# Acceptance test of `pip install infermeter`, as a user with no checkout does it: in a fresh venv
# in a temporary directory, install the wheel, then run the simulator, measure it
# (`run --quick`), serve the report with the embedded viewer (`view`: the page, the wasm and the
# report fetched over HTTP) and write it as one file (`export`).
#
#   bash tests/wheel/run.sh WHEEL
#
# The simulated GPU is the tests' fast one (a copy of collector/tests/data/fast-sim.toml beside
# the venv): the same suite, seconds instead of minutes of simulated prefill.
set -euo pipefail
wheel=$(realpath "${1:?usage: tests/wheel/run.sh WHEEL}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/infermeter-wheel-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "wheel test: FAILED: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits until FILE has a line matching PATTERN (a background command's output); prints it.
wait_for_line() {
  for _ in $(seq 1 300); do
    grep -m1 -E "$2" "$1" && return 0
    sleep 0.1
  done
  fail "no line matching '$2' in $1: $(cat "$1")"
}

cp "$here/../../collector/tests/data/fast-sim.toml" "$work/fast-sim.toml"
cd "$work"
python3 -m venv venv
venv/bin/pip install --quiet --disable-pip-version-check --no-index "$wheel"
# Only the venv and the system on the PATH: no build folder, no checkout.
export PATH="$work/venv/bin:/usr/local/bin:/usr/bin:/bin"
unset CARGO_TARGET_DIR INFERMETER_DIST
[ "$(command -v infermeter)" = "$work/venv/bin/infermeter" ] || fail "infermeter is not the venv's"
infermeter --version

sim_port=$(free_port)
infermeter sim --listen "127.0.0.1:$sim_port" --gpu test-fast --profiles fast-sim.toml >sim.log 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$sim_port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
infermeter run --base-url "http://127.0.0.1:$sim_port/v1" --suite four-scenario --quick \
  --quiet --out report.json
infermeter validate report.json

infermeter view report.json --listen 127.0.0.1:0 >view.log 2>&1 &
pids+=($!)
url=$(wait_for_line view.log '^Viewer: ' | sed 's/^Viewer: //')
grep -qx 'Serving the viewer embedded in this binary' view.log || fail "view did not serve the embedded viewer: $(cat view.log)"
origin=${url%%/\?*}
curl -fsS "$url" -o page.html
wasm=$(grep -oE '[A-Za-z0-9_./-]+_bg\.wasm' page.html | head -1)
[ -n "$wasm" ] || fail "the page names no wasm: $(cat page.html)"
wasm_type=$(curl -fsS -o wasm.gz -w '%{content_type}' -H 'Accept-Encoding: gzip' "$origin/${wasm#./}")
[ "$wasm_type" = application/wasm ] || fail "the wasm is served as $wasm_type"
[ "$(head -c 2 wasm.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "the wasm is not sent gzip-compressed"
curl -fsS "$origin/data/reports/1-report.json" -o served.json
cmp -s served.json report.json || fail "the served report differs from report.json"
echo "view: the page, the wasm ($wasm, gzip) and the report over HTTP from $origin"

infermeter export report.json -o shared.html | tee export.log
grep -qE '^Wrote shared\.html: [0-9.]+ KB' export.log || fail "export did not print its size"
grep -q 'id="infermeter-report-1"' shared.html || fail "the report is not in shared.html"
grep -q 'id="infermeter-wasm"' shared.html || fail "the viewer is not in shared.html"

infermeter completions bash | grep -q 'export' || fail "the bash completions do not name export"
echo "wheel test passed: $(basename "$wheel") installs and runs sim, run, view, export, completions"
