#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (CPU only) and generates a tiny random-weight llama GGUF model,
# from package registries alone (PyPI), caching both outside the repository.
#
# Usage: engines/llama-cpp/setup.sh [all|server|model]     (default: all)
#
# Everything lands under ${INFERMETER_CACHE:-$HOME/.cache/infermeter}/llama.cpp/:
#   venv/                          cmake, ninja, gguf, tokenizers, numpy (pinned below)
#   <version>/bin/llama-server     the built server, keyed by llama-cpp-python sdist version
#   models/<script-hash>/          tiny-llama.gguf + hf-tokenizer/ (keyed by make_model.py's sha256)
# A second run finds both and takes seconds. The last lines printed are KEY=VALUE paths, so callers
# can `eval "$(setup.sh | grep -E '^[A-Z_]+=')"`.
set -euo pipefail

# The llama.cpp source comes vendored in llama-cpp-python's sdist: PyPI is reachable, GitHub is not.
LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
# Pinned so that a cold build and the generated model are the same on every machine.
PY_TOOLS=(cmake==4.4.4 ninja==1.13.2 gguf==0.19.0 tokenizers==0.23.3 numpy==2.4.6)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${INFERMETER_CACHE:-$HOME/.cache/infermeter}/llama.cpp"
VENV="$CACHE_ROOT/venv"
VERSION_DIR="$CACHE_ROOT/$LLAMA_CPP_PYTHON_VERSION"
LLAMA_SERVER="$VERSION_DIR/bin/llama-server"
WHAT="${1:-all}"

log() { echo "[llama-cpp setup] $*" >&2; }
die() {
    local step="$1"; shift
    echo "[llama-cpp setup] ERROR in step '$step': $*" >&2
    exit 1
}

case "$WHAT" in
    all|server|model) ;;
    *) die "arguments" "unknown argument '$WHAT' (expected all, server or model)" ;;
esac

mkdir -p "$CACHE_ROOT" || die "cache" "cannot create $CACHE_ROOT; set INFERMETER_CACHE to a writable folder"

# Two serve.sh started together must not build into the same folder at once: the second one waits.
exec 9>"$CACHE_ROOT/.setup.lock"
if ! flock -n 9; then
    log "another setup.sh is running (building?); waiting for it to finish"
    flock 9
fi

# --- step 1: Python tools venv ------------------------------------------------------------------
ensure_venv() {
    local stamp="$VENV/.infermeter-tools"
    if [[ -x "$VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "${PY_TOOLS[*]}" ]]; then
        return
    fi
    log "creating Python venv with ${PY_TOOLS[*]} in $VENV"
    python3 -m venv "$VENV" \
        || die "venv" "python3 -m venv failed; install python3-venv (apt-get install python3-venv)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "${PY_TOOLS[@]}" \
        || die "venv" "pip install ${PY_TOOLS[*]} failed; check that PyPI is reachable (pip config / proxy)"
    echo "${PY_TOOLS[*]}" >"$stamp"
}

# --- step 2: llama-server ------------------------------------------------------------------------
server_ok() { [[ -x "$LLAMA_SERVER" ]] && "$LLAMA_SERVER" --version >/dev/null 2>&1; }

build_server() {
    if server_ok; then
        return
    fi
    local sdist_dir="$VERSION_DIR/sdist"
    local src="$sdist_dir/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
    local build="$VERSION_DIR/build"
    local build_log="$VERSION_DIR/build.log"
    mkdir -p "$sdist_dir" "$VERSION_DIR/bin"

    if [[ ! -f "$src/CMakeLists.txt" ]]; then
        log "downloading llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION sdist from PyPI"
        # --no-binary for this one package only: ':all:' would also build cmake from source.
        "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps \
            --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$sdist_dir" \
            || die "download" "pip download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION failed; check PyPI access"
        tar -xzf "$sdist_dir/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C "$sdist_dir" \
            || die "download" "cannot unpack the sdist in $sdist_dir; delete that folder and rerun"
        [[ -f "$src/CMakeLists.txt" ]] \
            || die "download" "the sdist has no vendor/llama.cpp/CMakeLists.txt; pick another LLAMA_CPP_PYTHON_VERSION"
    fi

    command -v c++ >/dev/null || die "build" "no C++ compiler; apt-get install build-essential"
    log "configuring llama.cpp (log: $build_log)"
    # GGML_NATIVE=OFF: the cached binary must run on any x86-64, not only the CPU that built it.
    # No UI (neither npm build nor the prebuilt download), no OpenSSL/curl (HTTPS model download is
    # unused and would add a system dependency), static libs so bin/llama-server stands alone.
    PATH="$VENV/bin:$PATH" cmake -S "$src" -B "$build" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=OFF \
        -DLLAMA_CURL=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF \
        >"$build_log" 2>&1 \
        || die "build" "cmake configure failed; see the end of $build_log"
    log "building llama-server on ${LLAMA_BUILD_JOBS:-2} jobs (about 10 minutes on 2 cores; log: $build_log)"
    PATH="$VENV/bin:$PATH" cmake --build "$build" --target llama-server -j "${LLAMA_BUILD_JOBS:-2}" \
        >>"$build_log" 2>&1 \
        || die "build" "compiling llama-server failed; see the end of $build_log"
    cp "$build/bin/llama-server" "$LLAMA_SERVER.tmp" && mv "$LLAMA_SERVER.tmp" "$LLAMA_SERVER"
    server_ok || die "build" "$LLAMA_SERVER --version does not run; see $build_log"
    log "built $LLAMA_SERVER"
}

# --- step 3: tiny model --------------------------------------------------------------------------
make_model() {
    if [[ -f "$MODEL_GGUF" && -f "$TOKENIZER_DIR/tokenizer.json" ]]; then
        return
    fi
    log "generating the tiny model into $MODEL_DIR"
    local tmp="$MODEL_DIR.tmp.$$"
    rm -rf "$tmp"
    "$VENV/bin/python" "$HERE/make_model.py" --out "$tmp" \
        || { rm -rf "$tmp"; die "model" "make_model.py failed (output above)"; }
    rm -rf "$MODEL_DIR"
    mv "$tmp" "$MODEL_DIR"
}

ensure_venv
if [[ "$WHAT" == all || "$WHAT" == server ]]; then
    build_server
fi
if [[ "$WHAT" == all || "$WHAT" == model ]]; then
    [[ -f "$HERE/make_model.py" ]] || die "model" "$HERE/make_model.py is missing"
    # Keyed by the generator's content: editing make_model.py yields a new model, never a stale one.
    MODEL_KEY="$(sha256sum "$HERE/make_model.py" | cut -c1-16)"
    MODEL_DIR="$CACHE_ROOT/models/$MODEL_KEY"
    MODEL_GGUF="$MODEL_DIR/tiny-llama.gguf"
    TOKENIZER_DIR="$MODEL_DIR/hf-tokenizer"
    make_model
fi

if [[ "$WHAT" == all || "$WHAT" == server ]]; then
    echo "LLAMA_SERVER=$LLAMA_SERVER"
fi
if [[ "$WHAT" == all || "$WHAT" == model ]]; then
    echo "MODEL_GGUF=$MODEL_GGUF"
    echo "TOKENIZER_DIR=$TOKENIZER_DIR"
fi
