#!/usr/bin/env bash
# Starts llama.cpp's llama-server (CPU) with the tiny generated model on 127.0.0.1, in the background.
#
# Usage: engines/llama-cpp/serve.sh [PORT]        start (default port 8091); runs setup.sh first (cached)
#        engines/llama-cpp/serve.sh stop [PORT]   stop the server this script started on PORT
#
# On success the last lines are LLAMA_BASE_URL=http://127.0.0.1:PORT/v1, LLAMA_PID=..., LLAMA_LOG=...
# and MODEL_NAME=tiny-llama, so callers can `eval "$(serve.sh | grep -E '^[A-Z_]+=')"`.
# Environment: LLAMA_HEALTH_TIMEOUT (seconds, default 120), LLAMA_SERVER_EXTRA_ARGS (appended to the
# command line, e.g. "--no-cache-prompt"), INFERMETER_CACHE (cache root, default ~/.cache/infermeter).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN_DIR="${INFERMETER_CACHE:-$HOME/.cache/infermeter}/llama.cpp/run"
MODEL_ALIAS="tiny-llama"

die() { echo "[llama-cpp serve] ERROR: $*" >&2; exit 1; }
log() { echo "[llama-cpp serve] $*" >&2; }

valid_port() { [[ "$1" =~ ^[0-9]+$ ]] && (( $1 >= 1 && $1 <= 65535 )); }

if [[ "${1:-}" == stop ]]; then
    PORT="${2:-8091}"
    valid_port "$PORT" || die "'$PORT' is not a port number"
    pidfile="$RUN_DIR/llama-server-$PORT.pid"
    [[ -f "$pidfile" ]] || die "no server started by serve.sh on port $PORT ($pidfile is missing)"
    pid="$(cat "$pidfile")"
    # Only kill the pid if it is still our llama-server: pids get reused.
    if [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == llama-server ]]; then
        kill "$pid"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
        log "stopped llama-server pid $pid on port $PORT"
    else
        log "llama-server pid $pid on port $PORT was not running"
    fi
    rm -f "$pidfile"
    exit 0
fi

PORT="${1:-8091}"
valid_port "$PORT" || die "'$PORT' is not a port number (usage: serve.sh [PORT] | serve.sh stop [PORT])"
command -v curl >/dev/null || die "curl is needed to wait for /health; apt-get install curl"

paths="$("$HERE/setup.sh")" || die "setup.sh failed (see its error above)"
eval "$(grep -E '^(LLAMA_SERVER|MODEL_GGUF|TOKENIZER_DIR)=' <<<"$paths")"

if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/"; then
    die "port $PORT on 127.0.0.1 is already in use; pick another (serve.sh PORT) or stop it (serve.sh stop $PORT)"
fi

mkdir -p "$RUN_DIR"
LOG="$RUN_DIR/llama-server-$PORT.log"
PIDFILE="$RUN_DIR/llama-server-$PORT.pid"
# -c is the total KV cache: with -np 4 slots each gets 4,096 tokens, the model's n_ctx_train.
# -t 1: one thread per batch leaves the other core of a 2-core machine to the load generator.
# shellcheck disable=SC2086 # LLAMA_SERVER_EXTRA_ARGS is a list of flags on purpose
setsid "$LLAMA_SERVER" -m "$MODEL_GGUF" -a "$MODEL_ALIAS" --host 127.0.0.1 --port "$PORT" \
    -c 16384 -np 4 -t 1 --metrics --no-webui ${LLAMA_SERVER_EXTRA_ARGS:-} \
    >"$LOG" 2>&1 </dev/null &
PID=$!
echo "$PID" >"$PIDFILE"

timeout="${LLAMA_HEALTH_TIMEOUT:-120}"
deadline=$(( SECONDS + timeout ))
until [[ "$(curl -s --max-time 2 "http://127.0.0.1:$PORT/health" 2>/dev/null)" == *'"ok"'* ]]; do
    if ! kill -0 "$PID" 2>/dev/null; then
        rm -f "$PIDFILE"
        echo "----- last lines of $LOG -----" >&2; tail -n 30 "$LOG" >&2
        die "llama-server exited before becoming healthy (see the log above)"
    fi
    if (( SECONDS >= deadline )); then
        echo "----- last lines of $LOG -----" >&2; tail -n 30 "$LOG" >&2
        kill "$PID" 2>/dev/null || true
        rm -f "$PIDFILE"
        die "llama-server did not answer /health with ok within ${timeout}s; raise LLAMA_HEALTH_TIMEOUT or read $LOG"
    fi
    sleep 0.5
done

log "llama-server is up (stop it with: $HERE/serve.sh stop $PORT)"
echo "LLAMA_BASE_URL=http://127.0.0.1:$PORT/v1"
echo "LLAMA_PID=$PID"
echo "LLAMA_LOG=$LOG"
echo "MODEL_NAME=$MODEL_ALIAS"
echo "TOKENIZER_DIR=$TOKENIZER_DIR"
