#!/usr/bin/env bash
# Measures serve.py on this machine's GPU with infermeter, NVML power on and nvidia-smi sampled
# alongside, in one go (a borrowed GPU machine keeps nothing between calls).
#
#   engines/transformers/gpu-run.sh INFERMETER TOKENIZER_DIR OUT_DIR
#
# DEADLINE_S (default 570): seconds after the start by which the run is interrupted (partial
# report kept). INFERMETER_EXTRA: more `infermeter run` options (e.g. --resume).
# Writes into OUT_DIR: the report and its records, server.log, collector.log (with each level's
# power window on the wall clock) and smi.csv (nvidia-smi's power.draw every 100 ms), which
# compare_power.py reads. Exits non-zero, with the server's log tail, when the server fails.
set -uo pipefail
bin=${1:?infermeter binary}; tok=${2:?tokenizer dir}; out=${3:?output dir}
here=$(cd "$(dirname "$0")" && pwd)
port=${PORT:-8000}
mkdir -p "$out"
say() { printf '[gpu-run %(%H:%M:%S)T] %s\n' -1 "$*"; }

say "machine: $(uname -m), $(nproc) cores"
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv
python3 - <<'EOF'
import importlib
for name in ["torch", "transformers", "aiohttp", "tokenizers", "pynvml"]:
    try:
        print(f"  {name} {importlib.import_module(name).__version__}")
    except Exception as error:  # a missing package is reported, the server start says the rest
        print(f"  {name}: {error}")
EOF

say "starting serve.py"
HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 python3 "$here/serve.py" --tokenizer "$tok" --port "$port" \
    >"$out/server.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    kill -0 $server 2>/dev/null || { say "serve.py died"; tail -40 "$out/server.log"; exit 1; }
    sleep 1
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { say "serve.py not up in 300 s"; tail -40 "$out/server.log"; exit 1; }
say "server up"; tail -5 "$out/server.log"

nvidia-smi --query-gpu=timestamp,index,power.draw,power.draw.instant --format=csv,noheader,nounits -lms 100 \
    >"$out/smi.csv" 2>"$out/smi.err" &
smi=$!
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
# A borrowed machine ends its command at a hard limit: stop the run with Ctrl-C before it, so
# the levels measured so far are written as a report that `run --resume` continues.
left=$(( ${DEADLINE_S:-570} - SECONDS ))
say "measuring ($gpu), $left s left before the deadline"
INFERMETER_LOG=info,infermeter::power=debug timeout -s INT -k 30 "$left" "$bin" run --base-url "http://127.0.0.1:$port/v1" \
    --suite "$here/h100-suite.toml" --tokenizer "$tok" --power nvml \
    --gpu "$gpu" --gpu-count 1 --precision BF16 \
    --title "Llama-3.1-8B shape (random weights, bf16) on transformers' continuous batching, 1x $gpu (measured)" \
    --label weights=random --label engine=transformers-continuous-batching \
    --out "$out/report.json" ${INFERMETER_EXTRA:-} 2>&1 | tee "$out/collector.log"
status=$?
kill $smi $server 2>/dev/null
say "collector exit $status"; tail -15 "$out/server.log"
exit $status
