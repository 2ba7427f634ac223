#!/usr/bin/env bash
# Builds the viewer into dist/: the wasm app with cargo (size-tuned, in a profile of its own),
# the custom ECharts bundle into public/vendor/, then scripts/assemble-viewer.mjs runs
# wasm-bindgen and the pinned wasm-opt, minifies the JS and CSS and writes index.html from the
# root index.html's `data-trunk` links (trunk reads the same file, for `trunk serve` while
# developing; the build does not need trunk). Then it writes gzip copies and prints the shipped
# sizes. A viewer built before from the same inputs is reused ($INFERMETER_CACHE/viewer/). Run scripts/setup-build.sh first (scripts/demo.sh and scripts/test.sh do).
#
#   bash scripts/build-viewer.sh [--wasm-only]
#
# --wasm-only: only the cargo builds (the wasm and the splitting tool), which need no tool but
# the wasm32 target: scripts/demo.sh runs them while setup-build.sh still installs the tools.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
npm_bin="$cache/npm/node_modules/.bin"
# The pinned wasm-opt (npm binaryen) must come before Debian's: an older one silently breaks
# externref tables and the page stays blank.
export PATH="$npm_bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# Build folders of their own, inside the project's: cargo locks a build folder for a whole
# build, and scripts/demo.sh compiles the collector's dependencies in the project's folder while
# this builds; the splitting tool compiles in a second one while the wasm builds. Nothing is
# shared between them anyway: the wasm's profile and target are its own, and so are the host's
# build scripts and proc macros built for it.
target=${CARGO_TARGET_DIR:-$cache/target}
export CARGO_TARGET_DIR=$target/viewer-build
cd "$root"
wasm_only=
case "${1:-}" in
  --wasm-only) wasm_only=1 ;;
  "") ;;
  *) echo "build-viewer: unknown option $1 (--wasm-only or none)" >&2; exit 2 ;;
esac

# A size-tuned profile for the wasm only (the workspace's release profile serves native
# binaries), defined here.
export CARGO_PROFILE_VIEWER_INHERITS=release CARGO_PROFILE_VIEWER_OPT_LEVEL=z \
  CARGO_PROFILE_VIEWER_LTO=true CARGO_PROFILE_VIEWER_CODEGEN_UNITS=1 CARGO_PROFILE_VIEWER_PANIC=abort
# Leptos' type-erased components: far fewer generic view instantiations, a much smaller wasm.
# Panic locations keep source paths in the wasm: shorten the registry's (the workspace's are
# relative already). Nothing here names the clone's path, so a clone elsewhere reuses the build.
# Fetched first, so that a fresh cache's first build names the same registry folders as the
# builds after it (other flags would rebuild every crate of the wasm once more).
cargo fetch --locked --target wasm32-unknown-unknown
# The relocations let tools/wasm-split split the wasm at its `#[wasm_split]` functions, which
# `infermeter_split` turns on (a build that does not split, e.g. `trunk serve`, leaves it off).
rustflags="--cfg erase_components --cfg infermeter_split -Clink-args=--emit-relocs"
shopt -s nullglob
for registry in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  rustflags+=" --remap-path-prefix=${registry%/}=crates"
done
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$rustflags"
# The splitting tool, for this machine, while the wasm builds (which ends in one long
# single-threaded step, LTO): optimised less than release (what it writes does not depend on
# that, and it runs for a second), so that it compiles in less time.
CARGO_TARGET_DIR=$target/viewer-tools CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
  cargo build --release --locked -p infermeter-wasm-split &
split_tool=$!
cargo build --profile viewer --target wasm32-unknown-unknown --locked --bin infermeter-viewer
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/viewer/infermeter-viewer.wasm"
wait "$split_tool"
export INFERMETER_WASM_SPLIT="$target/viewer-tools/release/infermeter-wasm-split"
[ -z "$wasm_only" ] || exit 0

for tool in wasm-opt wasm-bindgen zopfli; do
  command -v "$tool" >/dev/null || { echo "build-viewer: $tool not found; run scripts/setup-build.sh" >&2; exit 1; }
done
for module in esbuild terser echarts; do
  [ -d "$cache/npm/node_modules/$module" ] || { echo "build-viewer: npm module $module not found in $cache/npm; run scripts/setup-build.sh" >&2; exit 1; }
done

# What the rest makes from cargo's wasm depends only on these inputs: when a viewer was built
# from the same ones, it is reused (wasm-opt, the ECharts bundle and zopfli take a minute or
# more on two cores). The build cache outside the clone serves a fresh clone too.
key=$({
  sha256sum "$wasm" "$INFERMETER_WASM_SPLIT"
  wasm-bindgen --version
  wasm-opt --version
  find index.html style public data tools/package.json scripts/build-viewer.sh \
    scripts/assemble-viewer.mjs scripts/build-echarts.mjs scripts/echarts-bundle.mjs \
    -type f -not -path 'public/vendor/*' -print0 | sort -z | xargs -0 sha256sum
} | sha256sum | cut -c1-16)
built="$cache/viewer/$key"
if [ -f "$built/index.html" ]; then
  echo "[build-viewer] inputs unchanged: reusing the viewer built from them ($built)" >&2
  mkdir -p public/vendor
  cmp -s "$built/vendor/echarts.min.js" public/vendor/echarts.min.js \
    || cp "$built/vendor/echarts.min.js" public/vendor/echarts.min.js
else
  mkdir -p public/vendor "$cache/viewer"
  NODE_PATH="$cache/npm/node_modules" node scripts/build-echarts.mjs public/vendor/echarts.min.js
  # Built in a folder of its own, moved into place once whole.
  stage=$(mktemp -d "$cache/viewer/.building-XXXXXX")
  trap 'rm -rf "$stage"' EXIT
  NODE_PATH="$cache/npm/node_modules" node scripts/assemble-viewer.mjs "$wasm" "$stage"
  # Precompressed copies for servers that send them as is (`infermeter view`, nginx
  # gzip_static): compressed once, at build time, instead of on every request at a fast level.
  # The app's code goes through zopfli: gzip that any browser reads, 4% (20 KB) smaller than
  # gzip -9, for a few seconds of build. The reports (possibly megabytes, where zopfli takes
  # minutes) get gzip -9.
  find "$stage" -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' \) -exec zopfli {} +
  find "$stage" -type f \( -name '*.html' -o -name '*.json' \) -exec gzip -9 -n -k -f {} +
  chmod 755 "$stage"
  rm -rf "$built"
  mv "$stage" "$built"
  # The last four builds are kept (other clones, other branches), the older ones removed.
  find "$cache/viewer" -mindepth 1 -maxdepth 1 -type d -not -name '.*' -printf '%T@ %p\n' \
    | sort -rn | tail -n +5 | cut -d' ' -f2- | xargs -r rm -rf
fi

# Into dist/, the reports under data/ included.
# shellcheck source=scripts/sync-dist.sh
source "$root/scripts/sync-dist.sh"
sync_dist "$built"

"$root/scripts/viewer-size.sh"
