#!/usr/bin/env bash
# Builds the pip wheel (`pip install infermeter`): the viewer first (scripts/build-viewer.sh),
# then the collector with that viewer embedded (collector/build.rs), packaged by maturin
# (pyproject.toml) into $CARGO_TARGET_DIR/wheels/. maturin comes from PyPI, at the version pinned
# in Cargo.toml [workspace.metadata.tools], into a venv under $INFERMETER_CACHE.
#
#   bash scripts/build-wheel.sh [--profile release|dev] [--viewer-built]
#
# --profile: release (the default) for a wheel to publish; the test (tests/wheel/run.sh) uses dev,
#   the same binary unoptimized, which reuses what `cargo test` compiled (minutes less on 2 cores).
# --viewer-built: dist/ was just built by scripts/build-viewer.sh; do not build it again.
# Prints the wheel's path on its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/env.sh

profile=release build_viewer=1
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift 2 ;;
    --viewer-built) build_viewer=; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "build-wheel: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

maturin_version=$(awk '/^\[workspace\.metadata\.tools\]/ {on=1; next} /^\[/ {on=0}
  on && $1 == "maturin" { gsub(/"/, "", $3); print $3 }' Cargo.toml)
venv="$INFERMETER_CACHE/venv-maturin"
if ! "$venv/bin/maturin" --version 2>/dev/null | grep -qx "maturin $maturin_version"; then
  echo "[build-wheel] installing maturin $maturin_version from PyPI into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin==$maturin_version"
fi

if [ -n "$build_viewer" ]; then
  bash scripts/build-viewer.sh >&2
fi
[ -f dist/index.html ] || { echo "build-wheel: dist/ has no built viewer; run scripts/build-viewer.sh" >&2; exit 1; }
# Named, not found: a build script that ran before dist/ existed reruns when this changes.
export INFERMETER_VIEWER_DIST="$root/dist"

out="$CARGO_TARGET_DIR/wheels"
mkdir -p "$out"
# Only this version's wheels in $out, so the one printed below is the one just built.
rm -f "$out"/infermeter-*.whl
"$venv/bin/maturin" build --locked --profile "$profile" --out "$out" >&2
ls "$out"/infermeter-*.whl
