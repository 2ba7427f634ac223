#!/usr/bin/env bash
# Installs what the main job needs (scripts/demo.sh: build the viewer and the collector, measure,
# serve), idempotently: the wasm32 target, wasm-bindgen-cli at the version pinned in the root
# Cargo.toml ([workspace.metadata.tools]) and the npm tools of the viewer's build (the
# `dependencies` of tools/package.json). Test-only tools come from scripts/setup.sh, which runs
# this first. Tools live outside the repo: ~/.cargo/bin and $INFERMETER_CACHE.
#
# System prerequisites (a C compiler, Node and npm, curl, Python 3, zopfli) are checked before
# anything long starts: as root with apt-get they are installed, otherwise the script stops and
# prints the command that installs them.
#
#   bash scripts/setup-build.sh [build|test|--prerequisites|--collector-prerequisites]
#
# test: the npm tools of the tests too (scripts/setup.sh). --prerequisites: only the system
# prerequisites and the wasm32 target (seconds), all that cargo's wasm build needs: scripts/demo.sh
# starts that build right after, while this script, run again, installs the rest.
# --collector-prerequisites: only what the collector's build and the demo's run need (a C
# compiler, curl, Python 3, Rust), for a demo that uses the committed viewer
# (scripts/prebuilt-viewer.sh) and so builds no wasm.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
source "$root/scripts/setup-lib.sh"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

if [ "${1:-}" = --collector-prerequisites ]; then
  # shellcheck disable=SC2046 # one word per package
  need_debian_packages "building the collector and running the demo" $(missing_packages \
    cc:build-essential curl:curl python3:python3)
else
  # shellcheck disable=SC2046 # one word per package
  need_debian_packages "building the viewer and running the demo" $(missing_packages \
    cc:build-essential node:nodejs npm:npm curl:curl python3:python3 zopfli:zopfli)
fi
if ! command -v rustup >/dev/null || ! command -v cargo >/dev/null; then
  say "Rust is not installed (rustup and cargo not found on PATH or in ~/.cargo/bin)."
  say "install it with:  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y"
  exit 1
fi
[ "${1:-}" != --collector-prerequisites ] || exit 0

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
[ "${1:-}" != --prerequisites ] || exit 0
bindgen_version=$(tool_version wasm-bindgen)

# npm tools: reinstall only when tools/package.json changed, or when the tests' tools
# (devDependencies) are wanted and only the build's were installed. A folder that already has
# the tests' tools serves the build too.
npm_tools() { # build | test
  local want=$1 dir="$cache/npm" had
  mkdir -p "$dir"
  had=$(cat "$dir/.installed-for" 2>/dev/null || true)
  if cmp -s "$root/tools/package.json" "$dir/package.json" && [ -d "$dir/node_modules" ] \
    && { [ "$had" = test ] || [ "$had" = "$want" ]; }; then
    return
  fi
  say "installing the npm tools of tools/package.json ($want) into $dir"
  cp "$root/tools/package.json" "$dir/package.json"
  rm -f "$dir/.installed-for"
  if [ "$want" = test ]; then
    (cd "$dir" && npm install --no-audit --no-fund --no-update-notifier --loglevel=error)
  else
    (cd "$dir" && npm install --omit=dev --no-audit --no-fund --no-update-notifier --loglevel=error)
  fi
  echo "$want" >"$dir/.installed-for"
}

# wasm-bindgen-cli, compiled, while npm installs. Only its `wasm-bindgen` binary, without its
# default TLS feature (the test runner's downloads; rustls and ring are most of its compiling).
# Without --locked: its lockfile pins a crate the registry no longer has. Optimised less than
# cargo install's release (opt-level 1 compiles in less time): what it writes does not
# depend on that, and it runs for a second or two per viewer build.
pids=()
if ! wasm-bindgen --version 2>/dev/null | grep -q " $bindgen_version\$"; then
  say "installing wasm-bindgen-cli $bindgen_version (compiled once: minutes)"
  # In a folder of its own (cargo's temporary one), not the project's CARGO_TARGET_DIR.
  env -u CARGO_TARGET_DIR CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=false \
    cargo install --quiet wasm-bindgen-cli --version "$bindgen_version" --no-default-features \
    --bin wasm-bindgen --force &
  pids+=($!)
fi
npm_tools "${1:-build}" &
pids+=($!)
for pid in "${pids[@]}"; do
  wait "$pid"
done
