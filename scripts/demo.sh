#!/usr/bin/env bash
# The main job on the built-in default: start an engine (the simulator, or llama.cpp on CPU with
# --engine llama.cpp), measure it with the collector, fit the simulator to the report (the page's
# What If), then serve the viewer with the fresh report on 127.0.0.1 and print its URL. Reports
# are kept under runs/<time>/ and never overwritten. It installs only what this needs
# (scripts/setup-build.sh).
# The binary it builds ($CARGO_TARGET_DIR/<profile>/infermeter) has the viewer built in, so its
# `view` and `export` work from any folder.
#
#   bash scripts/demo.sh [--engine sim|llama.cpp] [--suite NAME] [--full] [--model M --gpu G]
#                        [--profile demo|release|dev] [--no-view] [--viewer-from-source]
#
# The default suite, scripts/demo-suite.toml, measures the simulator for about 1.5 minutes and
# fills every section of the page. --suite NAME: a built-in suite or a TOML file, quick (its
# levels thinned) unless --full; --full alone: the whole four-scenario suite (the published
# reports' shape; much longer). --no-view: stop after the summary (the report's path is the last
# line printed), e.g. to script the run. --profile: the collector's build; demo (the default)
# is release optimised less, to compile in 57% of its time (Cargo.toml); release for published
# measurements; dev, the unoptimized build the tests use. --viewer-from-source: build the viewer
# even when the committed one (prebuilt-viewer/) was built from this source.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/env.sh

engine=sim suite= quick=--quick model=qwen3.5-35b-a3b-fp8 gpu=h100-sxm
profile=demo view=1 viewer_from_source=
while [ $# -gt 0 ]; do
  case "$1" in
    --engine) engine=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --full) quick=; shift ;;
    --model) model=$2; shift 2 ;;
    --gpu) gpu=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --no-view) view=; shift ;;
    --viewer-from-source) viewer_from_source=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

# The demo's own suite is sized as it is written: not thinned by --quick.
if [ -z "$suite" ]; then
  if [ -n "$quick" ]; then suite=scripts/demo-suite.toml quick=; else suite=four-scenario; fi
fi

case "$profile" in
  demo) profile_dir=demo ;;
  release) profile_dir=release ;;
  dev) profile_dir=debug ;;
  *) echo "demo.sh: --profile must be demo, release or dev, not '$profile'" >&2; exit 2 ;;
esac

export INFERMETER_VIEWER_DIST=$root/dist
# The viewer committed with this source (scripts/prebuilt-viewer.sh: CI proves it byte-identical
# to the one the source builds) spares a first run the wasm toolchain and the viewer's build,
# most of its minutes on two cores; a changed source builds the viewer instead.
bash scripts/setup-build.sh --collector-prerequisites
if [ -z "$viewer_from_source" ] && bash scripts/prebuilt-viewer.sh use; then
  echo "[demo] building the collector ($profile), the committed viewer built in" >&2
else
  # Only what this job needs (the tests' tools come from scripts/setup.sh, run by
  # scripts/test.sh), its system prerequisites checked before anything long starts.
  bash scripts/setup-build.sh --prerequisites
  # On two cores, three builds at once keep both busy: the viewer's wasm build ends in one long
  # single-threaded step (LTO). The tools the viewer's assembly needs install meanwhile, and
  # the collector's dependencies compile (niced: the viewer is the longer way). The collector
  # itself embeds the viewer (collector/build.rs), so it waits for it: its build script fails
  # while INFERMETER_VIEWER_BUILDING is set, and the build after the viewer's compiles only the
  # collector's own crate. dist/ is named as scripts/test.sh names it (a build script rerun for
  # a changed variable would rebuild the collector).
  echo "[demo] building the viewer, and the collector with it ($profile)" >&2
  pids=()
  stop_builds() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
  trap stop_builds EXIT
  bash scripts/setup-build.sh &
  pids+=($!)
  bash scripts/build-viewer.sh --wasm-only >&2 &
  pids+=($!)
  # Quiet: it ends in the build script's error, and any other shows again in the build below.
  INFERMETER_VIEWER_BUILDING=1 nice -n 5 cargo build --profile "$profile" --locked \
    -p infermeter --keep-going >/dev/null 2>&1 &
  pids+=($!)
  wait "${pids[0]}"
  wait "${pids[1]}"
  bash scripts/build-viewer.sh >&2
  wait "${pids[2]}" || true
  trap - EXIT
fi
cargo build --profile "$profile" --locked -p infermeter
bin="$CARGO_TARGET_DIR/$profile_dir/infermeter"

out="$root/runs/$(date -u +%Y%m%dT%H%M%SZ)-$engine"
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT

case "$engine" in
  sim)
    # With vLLM's prefix caching modelled: the Users section's cache allowed/defeated differ.
    "$bin" sim --listen "127.0.0.1:$port" --model "$model" --gpu "$gpu" --prefix-cache \
      2>"$out/engine.log" &
    server_pid=$!
    base="http://127.0.0.1:$port/v1"
    extra=(--engine sim)
    ;;
  llama.cpp|llamacpp)
    eval "$(bash engines/llama-cpp/serve.sh "$port" | grep -E '^(LLAMA_[A-Z_]+|TOKENIZER_DIR)=')"
    server_pid=$LLAMA_PID
    base=$LLAMA_BASE_URL
    case "$suite" in scripts/demo-suite.toml) suite=llama-cpu quick=--quick ;; four-scenario) suite=llama-cpu ;; esac
    extra=(--engine llamacpp --tokenizer "$TOKENIZER_DIR" --gpu "CPU (no GPU)")
    ;;
  *) echo "demo.sh: --engine must be sim or llama.cpp, not '$engine'" >&2; exit 2 ;;
esac

for _ in $(seq 1 100); do
  curl -fsS "${base%/v1}/health" >/dev/null 2>&1 && break
  sleep 0.1
done
echo "[demo] set-up and builds took ${SECONDS}s; measuring $base with suite $suite ${quick:+(quick)}; report in $out" >&2
measure_start=$SECONDS
"$bin" run --base-url "$base" --suite "$suite" $quick "${extra[@]}" --out "$out/report.json"
cleanup
server_pid=
echo "[demo] measured for $((SECONDS - measure_start))s; fitting the simulator to the report (What If)" >&2
# A report the simulator's tables cannot fit (e.g. a model or GPU they lack) is still shown.
"$bin" fit "$out/report.json" >"$out/fit.txt" 2>&1 \
  || echo "[demo] no fit, so the page's What If stays empty: $(tail -1 "$out/fit.txt")" >&2
"$bin" summary "$out/report.json"
if [ -z "$view" ]; then
  echo "$out/report.json"
  exit 0
fi
exec "$bin" view "$out/report.json"
