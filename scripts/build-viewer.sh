#!/usr/bin/env bash
# Builds the viewer into dist/: the custom ECharts bundle into public/vendor/, then the wasm app
# with trunk (release, offline so a tool-version mismatch fails instead of downloading), then
# minifies the JS trunk leaves as is, writes gzip copies and prints the shipped sizes. Run scripts/setup.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
npm_bin="$cache/npm/node_modules/.bin"
# The pinned wasm-opt (npm binaryen) must come before Debian's: an older one silently breaks
# externref tables and the page stays blank.
export PATH="$npm_bin:$HOME/.cargo/bin:$PATH"
cd "$root"

for tool in wasm-opt trunk zopfli; do
  command -v "$tool" >/dev/null || { echo "build-viewer: $tool not found; run scripts/setup.sh" >&2; exit 1; }
done
for module in esbuild terser; do
  [ -d "$cache/npm/node_modules/$module" ] || { echo "build-viewer: npm module $module not found; run scripts/setup.sh" >&2; exit 1; }
done

mkdir -p public/vendor
NODE_PATH="$cache/npm/node_modules" node scripts/build-echarts.mjs public/vendor/echarts.min.js

# Size-tuned release profile for the wasm only (the workspace profile serves native binaries).
export CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_PANIC=abort
# Leptos' type-erased components: far fewer generic view instantiations, a much smaller wasm.
# Panic locations keep source paths in the wasm: shorten the registry's (the workspace's are
# relative already). Nothing here names the clone's path, so a clone elsewhere reuses the build.
rustflags="--cfg erase_components"
for registry in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  rustflags+=" --remap-path-prefix=${registry%/}=crates"
done
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$rustflags"
cargo fetch --target wasm32-unknown-unknown
# Built in a folder of its own, then copied into dist/ file by file (below).
stage=$(mktemp -d "${TMPDIR:-/tmp}/infermeter-dist-XXXXXX")
trap 'rm -rf "$stage"' EXIT
trunk build --release --offline --dist "$stage"
NODE_PATH="$cache/npm/node_modules" node scripts/minify-dist.mjs "$stage"
# Precompressed copies for servers that send them as is (`infermeter view`, nginx gzip_static):
# compressed once, at build time, instead of on every request at a fast level. The app's code
# goes through zopfli: gzip that any browser reads, 4% (20 KB) smaller than gzip -9, for a few
# seconds of build. The reports (possibly megabytes, where zopfli takes minutes) get gzip -9.
find "$stage" -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' \) -exec zopfli {} +
find "$stage" -type f \( -name '*.html' -o -name '*.json' \) -exec gzip -9 -n -k -f {} +

# Into dist/, replacing only the files whose bytes changed: the others keep their times, so the
# collector, which embeds dist/ and is rebuilt when a file in it is newer (collector/build.rs),
# is not rebuilt (over a minute on two cores) for a viewer that did not change.
mkdir -p dist
(cd "$stage" && find . -type f) | while IFS= read -r file; do
  if ! cmp -s "$stage/$file" "dist/$file"; then
    mkdir -p "dist/$(dirname "$file")"
    cp "$stage/$file" "dist/$file"
  fi
done
(cd dist && find . -type f) | while IFS= read -r file; do
  [ -e "$stage/$file" ] || rm "dist/$file"
done
find dist -mindepth 1 -type d -empty -delete

"$root/scripts/viewer-size.sh"
