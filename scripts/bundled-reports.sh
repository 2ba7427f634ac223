#!/usr/bin/env bash
# Measures the bundled simulated reports (data/reports/sim-*.json) again with this checkout's
# collector, each against its simulated deployment, one at a time: the simulator runs in real
# time, so each takes as long as its suite does on the modelled hardware (minutes to tens of
# minutes; nothing here can shorten that without changing the figures: `sim --time-scale`
# scales every measured time with it). The per-request records are not kept: each level's
# requests are in the report (`per_request`), which the Goodput section and the ranking read.
#   bash scripts/bundled-reports.sh                # every one, one after another (about 4 hours)
#   bash scripts/bundled-reports.sh llama-h100 qwen  # those named (see `reports` below)
# The runs are long and use little CPU: on a shared machine, wrap them in their own lock,
# `flock /tmp/infermeter-simruns.lock bash …`, not the one for timing-sensitive tests.
# Several names may run at once as separate invocations (each starts its own simulator).
# INFERMETER_BIN=path uses that collector binary instead of building one.
# A report measured again is in the current report format: drop its index entry's "Report format
# …" note in data/index.json (report/tests/it/data_files.rs checks that notes match).
# A report left partial (an interrupted run) is continued with `run --resume`, keeping its
# finished levels; a complete or missing one is measured from the start.
#   SEARCH=1 bash scripts/bundled-reports.sh llama-h100   # search each scenario's limit
# SEARCH=1 continues a complete report with `run --resume --search` (peak, 1 to 1,024 users,
# under the SLO the Which-configuration example uses): the levels it holds are judged again and
# only the loads the search needs and the report lacks are measured, so a comparison whose
# fixed levels all met the SLO gets its limits (a ranking of measured limits, not bounds).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/env.sh
bin=${INFERMETER_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --locked -q -p infermeter
  bin="$CARGO_TARGET_DIR/release/infermeter"
fi
data=data/reports
llama="Llama-3.1-8B"

# name | report file | simulator flags | suite | title (also the index's, where it lists one)
reports=(
  "llama-h100|sim-llama-3.1-8b-h100-sxm.json|--model llama-3.1-8b --gpu h100-sxm|four-scenario|$llama on 1x H100 SXM (simulated vLLM, four-scenario suite)"
  "llama-h200|sim-llama-3.1-8b-h200.json|--model llama-3.1-8b --gpu h200|four-scenario|$llama on 1x H200 (simulated vLLM, four-scenario suite)"
  "llama-b200|sim-llama-3.1-8b-b200.json|--model llama-3.1-8b --gpu b200|four-scenario|$llama on 1x B200 (simulated vLLM, four-scenario suite)"
  "llama-2x-h100|sim-llama-3.1-8b-2x-h100-sxm-tp.json|--model llama-3.1-8b --gpu h100-sxm --gpus 2|four-scenario|$llama on 2x H100 SXM, tensor parallel (simulated vLLM, four-scenario suite)"
  "llama-gpu-suite|sim-llama-3.1-8b-h100-sxm-gpu-suite.json|--model llama-3.1-8b --gpu h100-sxm|engines/transformers/h100-suite.toml|$llama on 1x H100 SXM (simulated vLLM; the suite of the measured transformers report, for comparison)"
  "qwen|sim-qwen3.5-35b-a3b-fp8-h100-sxm.json|--model qwen3.5-35b-a3b-fp8 --gpu h100-sxm|four-scenario|Qwen3.5-35B-A3B-FP8 on 1x H100 SXM (simulated)"
  "chat-sessions|sim-chat-sessions.json|--model qwen3.5-35b-a3b-fp8 --gpu h100-sxm --prefix-cache|$data/sim-chat-sessions.suite.toml|Qwen3.5-35B-A3B-FP8 on 1x H100 SXM (simulated, chat sessions for 1-512 users, prefix cache allowed and defeated)"
  "agents|sim-agents.json|--model qwen3-coder-30b-a3b --gpu h100-pcie --prefix-cache|$data/sim-agents.suite.toml|Qwen3-Coder-30B-A3B on 1x H100 PCIe (simulated, agentic jobs: 8 coding-agent traces at 1-8 concurrent jobs and 0.2-0.4 new jobs/s)"
  "step|sim-step-3.7-flash-2x-rtx-pro-6000.json|--model step-3.7-flash --gpu rtx-pro-6000 --gpus 2|$data/sim-step-3.7-flash-2x-rtx-pro-6000.suite.toml|Step-3.7-Flash NVFP4 on 2x RTX Pro 6000 Blackwell (simulated)"
)

wanted=("$@")
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true; }
trap cleanup EXIT

for entry in "${reports[@]}"; do
  IFS='|' read -r name file sim_flags suite title <<<"$entry"
  if [ ${#wanted[@]} -gt 0 ] && [[ ! " ${wanted[*]} " == *" $name "* ]]; then continue; fi
  log=$(mktemp)
  # shellcheck disable=SC2086 # the flags are words
  "$bin" sim --listen 127.0.0.1:0 $sim_flags 2>"$log" &
  sim_pid=$!
  base=
  for _ in $(seq 1 200); do
    base=$(sed -n 's/^infermeter sim: serving .* at \(http[^ ]*\)$/\1/p' "$log")
    [ -n "$base" ] && break
    sleep 0.1
  done
  [ -n "$base" ] || { cat "$log" >&2; echo "bundled-reports.sh: the simulator did not start" >&2; exit 1; }
  echo "[$name] $(date -u +%T) measuring $base with $suite into $data/$file" >&2
  start=(--force)
  if [ -f "$data/$file" ] && grep -q '"state": *"partial"' "$data/$file"; then start=(--resume); fi
  if [ -n "${SEARCH:-}" ] && [ -f "$data/$file" ]; then
    start=(--resume --search mode=peak,min=1,max=1024 --slo ttft=2s,tpot=50ms)
  fi
  "$bin" run --base-url "$base" --engine sim --suite "$suite" --title "$title" \
    --out "$data/$file" "${start[@]}"
  # Each level's requests are in the report itself (`per_request`); the records stay out of git.
  rm -f "$data/$file.records.jsonl" "$data/$file.records.interrupted.jsonl" "$log"
  cleanup
  wait "$sim_pid" 2>/dev/null || true
  sim_pid=
  echo "[$name] $(date -u +%T) done" >&2
done
