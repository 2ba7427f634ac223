#!/usr/bin/env bash
# Installs every tool the build and tests need, idempotently. Versions come from
# the root Cargo.toml ([workspace.metadata.tools]) so there is one place to pin them.
# Tools and npm packages live outside the repo: ~/.cargo/bin and $INFERMETER_CACHE.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
mkdir -p "$cache"

tool_version() { # reads `name = "x.y.z"` from [workspace.metadata.tools]
  awk -v key="$1" '
    /^\[workspace\.metadata\.tools\]/ {on=1; next}
    /^\[/ {on=0}
    on && $1 == key { gsub(/"/, "", $3); print $3 }' "$root/Cargo.toml"
}
trunk_version=$(tool_version trunk)
bindgen_version=$(tool_version wasm-bindgen)
say() { printf '[setup] %s\n' "$*" >&2; }

export PATH="$HOME/.cargo/bin:$PATH"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
for c in rustfmt clippy; do
  rustup component list --installed | grep -q "^$c" || rustup component add "$c"
done

if ! trunk --version 2>/dev/null | grep -q " $trunk_version\$"; then
  say "installing trunk $trunk_version (about 14 minutes the first time)"
  cargo install --locked trunk --version "$trunk_version"
fi
# wasm-bindgen-cli without --locked: its lockfile pins a crate the registry no longer has.
if ! wasm-bindgen --version 2>/dev/null | grep -q " $bindgen_version\$"; then
  say "installing wasm-bindgen-cli $bindgen_version"
  cargo install wasm-bindgen-cli --version "$bindgen_version" --force
fi

# zopfli writes the viewer's gzip copies (scripts/build-viewer.sh).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
  || ! command -v zopfli >/dev/null; then
  say "installing Debian chromium, chromium-driver and zopfli"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver zopfli >/dev/null
fi

# npm tools: reinstall only when tools/package.json changed.
npm_dir="$cache/npm"
mkdir -p "$npm_dir"
if ! cmp -s "$root/tools/package.json" "$npm_dir/package.json" || [ ! -d "$npm_dir/node_modules" ]; then
  say "installing npm tools into $npm_dir"
  cp "$root/tools/package.json" "$npm_dir/package.json"
  (cd "$npm_dir" && npm install --no-audit --no-fund --loglevel=error)
fi
# kubernetes-validate (PyPI) checks deploy/kubernetes and `infermeter k8s-manifest` output
# against the Kubernetes schemas, which ship inside the package: no network when it runs.
kv_version=$(tool_version kubernetes-validate)
kv_venv="$cache/venv-kubernetes-validate"
if ! "$kv_venv/bin/kubernetes-validate" --version 2>/dev/null | grep -q "$kv_version"; then
  say "installing kubernetes-validate $kv_version from PyPI into $kv_venv"
  python3 -m venv "$kv_venv"
  "$kv_venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$kv_version"
fi
# The benchmark tools whose result files `infermeter import` reads, each in its own venv (their
# dependencies conflict): the import tests run them against the simulator. guidellm brings
# torch, whose Linux wheel on PyPI carries the CUDA libraries (~6 GB, unused here);
# inference-perf needs Python 3.12 or newer.
python_at_least() { # the first Python 3.$1+ found, by path
  local p
  for p in python3 python3.13 python3.12 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
    if "$p" -c "import sys; sys.exit(sys.version_info < (3, $1))" 2>/dev/null; then
      command -v "$p"
      return
    fi
  done
  return 1
}
peer() { # NAME MINOR: installs NAME at its pinned version with a Python 3.MINOR or newer
  local name=$1 version venv python
  version=$(tool_version "$name")
  venv="$cache/peers/$name-$version"
  if [ "$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null)" = "$version" ]; then
    return
  fi
  if ! python=$(python_at_least "$2"); then
    say "WARNING: $name $version needs Python 3.$2 or newer and none was found; its import test fails under CI"
    return
  fi
  say "installing $name $version from PyPI into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$name==$version"
}
peer aiperf 11
peer guidellm 10
peer inference-perf 12
say "tools ready"
