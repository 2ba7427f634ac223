#!/usr/bin/env bash
# Installs every tool the tests need, idempotently: first what the main job needs
# (scripts/setup-build.sh: the wasm32 target, wasm-bindgen-cli, the viewer's npm tools), then
# what only the tests use: rustfmt and clippy, Debian chromium (the browser tests, through
# playwright-core), the npm test tools (playwright-core, axe-core), kubernetes-validate and the
# peer benchmark tools. Versions come from the root Cargo.toml ([workspace.metadata.tools]) so
# there is one place to pin them. Tools live outside the repo: ~/.cargo/bin and $INFERMETER_CACHE.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
mkdir -p "$cache"
source "$root/scripts/setup-lib.sh"

# Before anything long, the Debian packages only the tests need: chromium (the browser tests)
# and python3-venv (the test tools' virtual environments). As root with apt-get they are
# installed; otherwise this stops with the command that installs them.
packages=()
command -v chromium >/dev/null || packages+=(chromium)
python3 -c 'import ensurepip, venv' 2>/dev/null || packages+=(python3-venv)
need_debian_packages "the tests" "${packages[@]}"
bash "$root/scripts/setup-build.sh" test


export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
for c in rustfmt clippy; do
  rustup component list --installed | grep -q "^$c" || rustup component add "$c"
done

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
