#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what it needs, then runs every check.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/env.sh
# The steps below install every tool the tests use, so a test that would skip for a missing one
# (Node, Python's openai package, the llama.cpp build) fails instead under CI=true.
export CI=true
step() { printf '\n== %s ==\n' "$*"; }

step "tools"
bash scripts/setup.sh

step "format"
cargo fmt --all -- --check

# Before the collector is built: it embeds dist/ (collector/build.rs), and the CLI tests under
# CI=true check that `view` and `export` serve and inline that embedded viewer.
step "viewer release build"
bash scripts/build-viewer.sh
# A first demo uses the committed viewer instead of building one (scripts/demo.sh): it must be
# the one this source builds, byte for byte, or CI fails here, before a user can get it.
step "the committed viewer is this build"
bash scripts/prebuilt-viewer.sh check
# Named for every build below alike (scripts/build-wheel.sh names the same folder): a build
# script rerun for a changed variable would rebuild the collector each time.
export INFERMETER_VIEWER_DIST=$root/dist

step "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "real engine (llama.cpp on CPU; built once, then cached)"
eval "$(bash engines/llama-cpp/setup.sh | grep -E '^(LLAMA_SERVER|MODEL_GGUF|TOKENIZER_DIR)=')"
# The collector's real-engine test starts llama-server itself from these.
export INFERMETER_LLAMA_SERVER=$LLAMA_SERVER INFERMETER_LLAMA_MODEL=$MODEL_GGUF \
  INFERMETER_LLAMA_TOKENIZER=$TOKENIZER_DIR

step "native tests"
# The tests that time the machine (named timed_*, see collector/tests/cli/common.rs) run after
# the rest, alone: beside another test on two cores their figures move past their margins.
cargo test --workspace --locked -- --skip timed_
step "timing-sensitive tests, alone"
cargo test -p infermeter --test cli --locked -- timed_

step "report and engine crates on wasm32"
cargo build -p infermeter-report -p infermeter-engine --target wasm32-unknown-unknown --locked

step "pip wheel (maturin; dev profile: what the tests above compiled) in a fresh venv"
wheel=$(bash scripts/build-wheel.sh --profile dev --viewer-built | tail -1)
bash tests/wheel/run.sh "$wheel"

step "demo (scripts/demo.sh, dev build): its binary exports a report from outside the checkout"
# What a user runs first: the binary it leaves must carry the viewer, so `view` and `export`
# work from any folder (collector/build.rs embeds the dist/ demo.sh builds first).
demo_report=$(bash scripts/demo.sh --no-view --profile dev | tail -1)
outside=$(mktemp -d)
"$CARGO_TARGET_DIR/debug/infermeter" --version | grep -q "viewer built in"
(cd "$outside" && env -u INFERMETER_DIST "$CARGO_TARGET_DIR/debug/infermeter" export "$demo_report" -o demo.html)
grep -q 'id="infermeter-report-1"' "$outside/demo.html"
rm -rf "$outside" "$(dirname "$demo_report")"

step "browser tests"
node --test tests/browser/
