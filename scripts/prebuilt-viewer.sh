#!/usr/bin/env bash
# The viewer as built from this commit's source, committed in prebuilt-viewer/ so that a first
# run of scripts/demo.sh needs no wasm toolchain: on two cores, installing wasm-bindgen-cli and
# building the viewer took most of the fresh demo's 11 minutes. It holds the gzip copies of
# every file scripts/build-viewer.sh writes to dist/ (reports under data/ aside: `view` and
# `export` bring their own); each plain file is their gunzip, byte for byte. MANIFEST names the
# hash of the viewer's inputs (below) and the toolchain that built it.
#
# A stale or mismatched copy never reaches a user: `use` installs it only when the inputs hash
# to the manifest's (any change to the viewer's source, lockfile or build scripts builds from
# source instead), and scripts/test.sh (CI) builds the viewer from source and runs `check`,
# which fails unless every file is byte-identical to the committed one.
#
#   bash scripts/prebuilt-viewer.sh key     # print the hash of the viewer's inputs
#   bash scripts/prebuilt-viewer.sh inputs  # print the paths of the viewer's inputs
#   bash scripts/prebuilt-viewer.sh use     # into dist/ if current; exit 1 (saying why) if not
#   bash scripts/prebuilt-viewer.sh check   # dist/ (built from source) against the committed copy
#   bash scripts/prebuilt-viewer.sh write   # commit dist/ (built from source) as the copy
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prebuilt=prebuilt-viewer
say() { printf '[prebuilt-viewer] %s\n' "$*" >&2; }

# Everything the viewer's build reads, by path: its crate and the two it depends on (their
# tests aside, which the wasm does not contain), the lockfile, the splitting tool, the page's
# static files and the build scripts. Reports (data/) are not in the copy, so not inputs.
# A missing input hashes differently, as a changed one does.
inputs=(Cargo.toml Cargo.lock src index.html style public tools/package.json tools/wasm-split
  report/Cargo.toml report/src engine/Cargo.toml engine/build.rs engine/profiles.toml engine/src
  scripts/build-viewer.sh scripts/sync-dist.sh scripts/assemble-viewer.mjs
  scripts/build-echarts.mjs scripts/echarts-bundle.mjs)
inputs_key() {
  { find "${inputs[@]}" -type f -not -path 'public/vendor/*' -print0 2>/dev/null || true; } \
    | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32
}
manifest() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$prebuilt/MANIFEST"; }
rustc_version() { rustc --version 2>/dev/null || echo "rustc not found"; }
# The built files under dist/ that the copy holds, sorted.
built_files() { (cd dist && find . -path ./data -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort); }

case "${1:-}" in
  key) inputs_key ;;
  inputs) printf '%s\n' "${inputs[@]}" ;;
  use)
    [ -f "$prebuilt/MANIFEST" ] || { say "no $prebuilt/MANIFEST: building the viewer from source"; exit 1; }
    key=$(inputs_key)
    if [ "$key" != "$(manifest inputs)" ]; then
      say "the viewer's source differs from the one $prebuilt/ was built from: building it from source"
      exit 1
    fi
    # Into dist/ (scripts/sync-dist.sh), the reports under data/ kept.
    staged=$(mktemp -d)
    trap 'rm -rf "$staged"' EXIT
    (cd "$prebuilt" && find . -type f -name '*.gz' | sed 's|^\./||') | while IFS= read -r gz; do
      mkdir -p "$staged/$(dirname "$gz")"
      cp "$prebuilt/$gz" "$staged/$gz"
      gunzip -c "$prebuilt/$gz" >"$staged/${gz%.gz}"
    done
    # shellcheck source=scripts/sync-dist.sh
    source scripts/sync-dist.sh
    sync_dist "$staged" data
    say "the viewer's source is the one $prebuilt/ was built from ($(manifest rustc)): using it"
    ;;
  check)
    [ -f dist/index.html ] || { say "no dist/index.html: run scripts/build-viewer.sh first"; exit 1; }
    problems=()
    [ -f "$prebuilt/MANIFEST" ] || problems+=("$prebuilt/MANIFEST is missing")
    if [ ${#problems[@]} -eq 0 ]; then
      [ "$(inputs_key)" = "$(manifest inputs)" ] \
        || problems+=("the viewer's inputs hash to $(inputs_key), the manifest says $(manifest inputs)")
      [ "$(rustc_version)" = "$(manifest rustc)" ] \
        || problems+=("built here with $(rustc_version), the manifest says $(manifest rustc)")
      committed=$(cd "$prebuilt" && find . -type f -name '*.gz' | sed 's|^\./||' | LC_ALL=C sort)
      built=$(built_files | grep '\.gz$' || true)
      if [ "$committed" != "$built" ]; then
        problems+=("the files differ (< committed, > built): $(diff <(echo "$committed") <(echo "$built") | grep '^[<>]' | tr '\n' ' ' || true)")
      fi
      while IFS= read -r gz; do
        if [ -f "dist/$gz" ] && ! cmp -s "$prebuilt/$gz" "dist/$gz"; then
          problems+=("$gz differs from the build")
        fi
        if [ -f "dist/${gz%.gz}" ] && ! gunzip -c "$prebuilt/$gz" | cmp -s - "dist/${gz%.gz}"; then
          problems+=("${gz%.gz} differs from the build")
        fi
      done <<<"$committed"
    fi
    if [ ${#problems[@]} -gt 0 ]; then
      say "the committed viewer ($prebuilt/) is not the one this commit's source builds:"
      printf '  - %s\n' "${problems[@]}" >&2
      say "rebuild and commit it: bash scripts/build-viewer.sh && bash scripts/prebuilt-viewer.sh write"
      exit 1
    fi
    say "the committed viewer is byte-identical to the one built from source ($(manifest inputs))"
    ;;
  write)
    [ -f dist/index.html ] || { say "no dist/index.html: run scripts/build-viewer.sh first"; exit 1; }
    rm -rf "$prebuilt"
    mkdir -p "$prebuilt"
    built_files | grep '\.gz$' | while IFS= read -r gz; do
      mkdir -p "$prebuilt/$(dirname "$gz")"
      cp "dist/$gz" "$prebuilt/$gz"
    done
    {
      echo "# Written by scripts/prebuilt-viewer.sh write: the viewer built from the inputs hashed below."
      echo "inputs $(inputs_key)"
      echo "rustc $(rustc_version)"
      echo "wasm-bindgen $(wasm-bindgen --version 2>/dev/null | awk '{print $2}')"
    } >"$prebuilt/MANIFEST"
    say "wrote $prebuilt/ ($(du -sh "$prebuilt" | cut -f1)): commit it with the source it was built from"
    ;;
  *) sed -n '2,18p' "$0" >&2; exit 2 ;;
esac
