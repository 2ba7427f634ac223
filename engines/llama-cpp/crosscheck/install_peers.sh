#!/usr/bin/env bash
# Installs the peer benchmark tools (AIPerf, guidellm) at pinned versions, each in its own venv under
# ${INFERMETER_CACHE:-~/.cache/infermeter}/peers/. Idempotent: a venv whose tool already reports the
# pinned version is left alone. Only PyPI is used. Prints AIPERF_BIN= and GUIDELLM_BIN= at the end.
set -euo pipefail

# The versions pinned in the root Cargo.toml, where scripts/setup.sh installs them from too.
pinned() {
    awk -v key="$1" '/^\[workspace\.metadata\.tools\]/ {on=1; next} /^\[/ {on=0}
        on && $1 == key { gsub(/"/, "", $3); print $3 }' "$(dirname "$0")/../../../Cargo.toml"
}
AIPERF_VERSION="${AIPERF_VERSION:-$(pinned aiperf)}"
GUIDELLM_VERSION="${GUIDELLM_VERSION:-$(pinned guidellm)}"
PEERS="${INFERMETER_CACHE:-$HOME/.cache/infermeter}/peers"
PYTHON="${PEERS_PYTHON:-python3}"

log() { echo "[crosscheck install] $*" >&2; }
die() { echo "[crosscheck install] ERROR: $*" >&2; exit 1; }

# install NAME VERSION: venv at $PEERS/NAME-VERSION with `pip install NAME==VERSION`.
install() {
    local name="$1" version="$2" venv="$PEERS/$1-$2"
    local installed
    installed="$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)"
    if [[ "$installed" == "$version" ]]; then
        log "$name $version already installed in $venv"
        return
    fi
    log "installing $name==$version into $venv (this takes minutes)"
    local start=$SECONDS
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv" || die "could not create $venv with $PYTHON (set PEERS_PYTHON to a Python 3.11-3.13)"
    "$venv/bin/pip" install --quiet --upgrade pip >&2
    "$venv/bin/pip" install --quiet "$name==$version" >&2 \
        || { rm -rf "$venv"; die "pip install $name==$version failed (see pip's output above)"; }
    log "$name $version installed in $((SECONDS - start)) s, $(du -sh "$venv" | cut -f1)"
}

mkdir -p "$PEERS"
# One install at a time, even if two cross-check runs start together.
exec 9>"$PEERS/.lock"
flock 9
install aiperf "$AIPERF_VERSION"
install guidellm "$GUIDELLM_VERSION"
echo "AIPERF_BIN=$PEERS/aiperf-$AIPERF_VERSION/bin/aiperf"
echo "GUIDELLM_BIN=$PEERS/guidellm-$GUIDELLM_VERSION/bin/guidellm"
