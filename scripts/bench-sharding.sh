#!/usr/bin/env bash
# The sharding arithmetic (README, "Beyond one machine"), measured on this machine: the
# collector's CPU time per streamed event and per stream-second, its memory per stream, and the
# bytes one event costs on the wire. A release collector drives the simulator on loopback at 1
# and at STREAMS streams (peak mode), each under /usr/bin/time; the differences are per stream.
#
#   bash scripts/bench-sharding.sh [STREAMS]      # default 1000
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/env.sh
streams=${1:-1000}
port=18431
work=$(mktemp -d)
trap 'kill "$sim_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

cargo build --release --locked -p infermeter >&2
bin="$CARGO_TARGET_DIR/release/infermeter"
# A B200 holds the KV cache of every stream, so no request waits in the engine's queue.
"$bin" sim --listen "127.0.0.1:$port" --gpu b200 --max-num-seqs 4096 >"$work/sim.log" 2>&1 &
sim_pid=$!
until curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null; do sleep 0.2; done

measure() { # streams -> "max_rss_kb user_s sys_s" of the collector, and its report
  local n=$1
  cat >"$work/suite-$n.toml" <<EOF
name = "bench-sharding"
warmup = 1
[[scenario]]
id = "chat"
name = "Chat"
input_tokens = 128
output_tokens = 512
[peak]
levels = [$n]
requests_per_slot = 1
min_seconds = 20
EOF
  /usr/bin/time -f "%M %U %S" -o "$work/time-$n" "$bin" --quiet run \
    --base-url "http://127.0.0.1:$port/v1" --suite "$work/suite-$n.toml" \
    --out "$work/report-$n.json" --power none >&2
}
measure 1
measure "$streams"

# One request as the collector sends it to this engine, its stream counted byte by byte.
curl -sN -D "$work/headers" "http://127.0.0.1:$port/v1/chat/completions" \
  -H 'content-type: application/json' \
  -d '{"model":"Qwen/Qwen3-Coder-30B-A3B-Instruct","stream":true,"max_tokens":256,"min_tokens":256,"ignore_eos":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"messages":[{"role":"user","content":"hello"}]}' \
  >"$work/stream"

python3 - "$work" "$streams" <<'EOF'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
def run(k):
    rss, user, sys_ = open(f"{work}/time-{k}").read().split()[-3:]
    report = json.load(open(f"{work}/report-{k}.json"))
    level = report["series"][0]["levels"][0]
    events = sum(len(json.loads(l).get("chunks", [])) for l in open(f"{work}/report-{k}.json.records.jsonl"))
    return int(rss), float(user) + float(sys_), level, events
rss1, cpu1, _, events1 = run(1)
rssn, cpun, level, eventsn = run(n)
per_stream_tok_s = level["system_output_tok_s"] / n
cpu_per_event_us = (cpun - cpu1) / (eventsn - events1) * 1e6
body = open(f"{work}/stream", "rb").read()
data_events = body.count(b"\ndata: ") + body.startswith(b"data: ")
headers = len(open(f"{work}/headers", "rb").read())
bytes_per_event = len(body) / data_events
print(f"streams                         {n} (and 1), peak mode, 128 in / 512 out, simulated B200")
print(f"decode speed per stream         {per_stream_tok_s:.1f} tok/s (one token per event)")
print(f"collector CPU per event         {cpu_per_event_us:.1f} us  ({cpun:.1f} s at {n}, {cpu1:.1f} s at 1; {eventsn} and {events1} events)")
print(f"collector CPU per stream-second {cpu_per_event_us * per_stream_tok_s / 1e3:.2f} ms at {per_stream_tok_s:.0f} tok/s")
print(f"streams per core                {1e6 / (cpu_per_event_us * per_stream_tok_s):.0f} at {per_stream_tok_s:.0f} tok/s, {1e6 / (cpu_per_event_us * 50):.0f} at 50 tok/s")
print(f"memory per stream               {(rssn - rss1) / (n - 1):.1f} KiB  (max RSS {rssn / 1024:.1f} MiB at {n}, {rss1 / 1024:.1f} MiB at 1)")
print(f"bytes per SSE event             {bytes_per_event:.0f}  (+{headers} bytes of response headers per request)")
print(f"NIC per stream                  {bytes_per_event * 50 * 8 / 1e3:.0f} kbit/s at 50 tok/s; 10,000 streams: {bytes_per_event * 50 * 8 * 1e4 / 1e9:.2f} Gbit/s")
EOF
