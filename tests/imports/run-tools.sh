#!/usr/bin/env bash
# Runs a benchmark tool against an OpenAI-compatible server at two small loads and leaves its
# result files as the tool writes them: what `infermeter import` reads. The import tests run it
# against the simulator (collector/tests/cli/imports.rs); the committed fixtures beside this
# script were made with it (README.md).
#
# Usage: tests/imports/run-tools.sh TOOL BASE_URL MODEL TOKENIZER_DIR OUT_DIR
#   TOOL           aiperf | guidellm | inference-perf | vllm
#   BASE_URL       the server's root, e.g. http://127.0.0.1:8000
#   MODEL          the model name the server serves
#   TOKENIZER_DIR  a Hugging Face tokenizer folder (tokenizer.json, tokenizer_config.json)
#   OUT_DIR        where the tool's files go (one folder per load where the tool needs it)
# The tools come from $INFERMETER_CACHE/peers/<tool>-<version> (scripts/setup.sh; vLLM from
# $VLLM_BIN, installed by hand: it is not part of the test command). Each load: 64 input and 32
# output tokens per request, concurrency 1 (8 requests) and 4 (16 requests).
set -euo pipefail
tool=$1 base_url=$2 model=$3 tokenizer=$4 out=$5
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
version() {
  awk -v key="$1" '/^\[workspace\.metadata\.tools\]/ {on=1; next} /^\[/ {on=0}
    on && $1 == key { gsub(/"/, "", $3); print $3 }' "$root/Cargo.toml"
}
bin() { # the tool's executable in its venv
  local exe="$cache/peers/$1-$(version "$1")/bin/$2"
  [ -x "$exe" ] || { echo "run-tools.sh: $exe is missing; run scripts/setup.sh" >&2; exit 2; }
  echo "$exe"
}
mkdir -p "$out"
# No tool may reach a model hub: the tokenizer is a local folder.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 DO_NOT_TRACK=1
loads=("1 8" "4 16")

case $tool in
aiperf)
  aiperf=$(bin aiperf aiperf)
  for load in "${loads[@]}"; do
    read -r c n <<<"$load"
    # AIPerf resolves a tokenizer path through the hub client, which refuses local paths in
    # offline mode; a local folder never reaches the hub.
    env -u HF_HUB_OFFLINE -u TRANSFORMERS_OFFLINE "$aiperf" profile -m "$model" --url "$base_url" \
      --endpoint-type chat --streaming --isl 64 --isl-stddev 0 --osl 32 --osl-stddev 0 \
      --extra-inputs ignore_eos:true --use-server-token-count \
      --concurrency "$c" --request-count "$n" --tokenizer "$tokenizer" --random-seed 7 \
      --ui-type none --no-gpu-telemetry --no-server-metrics --artifact-dir "$out/c$c" >"$out/c$c.log" 2>&1
  done
  ;;
guidellm)
  "$(bin guidellm guidellm)" run \
    --backend "kind=openai_http,target=$base_url,model=$model" \
    --profile kind=concurrent --override profile.streams 1,4 \
    --constraint kind=max_requests,count=16 \
    --data kind=synthetic_text,prompt_tokens=64,output_tokens=32 \
    --tokenizer "kind=huggingface_auto,model=$tokenizer" \
    --output "kind=json,path=$out/benchmarks.json" --output kind=console \
    --disable-console-interactive >"$out/guidellm.log" 2>&1
  ;;
inference-perf)
  cat >"$out/config.yml" <<EOF
api:
  type: completion
  streaming: true
data:
  type: random
  input_distribution: {min: 64, max: 64, mean: 64, std_dev: 0}
  output_distribution: {min: 32, max: 32, mean: 32, std_dev: 0}
load:
  type: concurrent
  stages:
    - {num_requests: 8, concurrency_level: 1}
    - {num_requests: 16, concurrency_level: 4}
server:
  type: vllm
  model_name: $model
  base_url: $base_url
tokenizer:
  pretrained_model_name_or_path: $tokenizer
storage:
  local_storage:
    path: $out/reports
EOF
  "$(bin inference-perf inference-perf)" --config_file "$out/config.yml" >"$out/inference-perf.log" 2>&1
  ;;
vllm)
  vllm=${VLLM_BIN:?set VLLM_BIN to a vllm executable (pip install vllm)}
  for load in "${loads[@]}"; do
    read -r c n <<<"$load"
    "$vllm" bench serve --backend openai-chat --base-url "$base_url" --endpoint /v1/chat/completions \
      --model "$model" --tokenizer "$tokenizer" --dataset-name random \
      --random-input-len 64 --random-output-len 32 --ignore-eos --num-prompts "$n" \
      --max-concurrency "$c" --seed 7 --save-result --save-detailed \
      --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99 \
      --result-dir "$out" --result-filename "c$c.json" >"$out/c$c.log" 2>&1
  done
  ;;
*)
  echo "run-tools.sh: unknown tool $tool (aiperf, guidellm, inference-perf or vllm)" >&2
  exit 2
  ;;
esac
