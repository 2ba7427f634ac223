#!/usr/bin/env bash
# Builds the viewer into dist/: the custom ECharts bundle into public/vendor/, then the wasm app
# with trunk (release, offline so a tool-version mismatch fails instead of downloading), then
# prints the shipped sizes. Run scripts/setup.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
npm_bin="$cache/npm/node_modules/.bin"
# The pinned wasm-opt (npm binaryen) must come before Debian's: an older one silently breaks
# externref tables and the page stays blank.
export PATH="$npm_bin:$HOME/.cargo/bin:$PATH"
cd "$root"

for tool in esbuild wasm-opt trunk; do
  command -v "$tool" >/dev/null || { echo "build-viewer: $tool not found; run scripts/setup.sh" >&2; exit 1; }
done

mkdir -p public/vendor
NODE_PATH="$cache/npm/node_modules" esbuild scripts/echarts-bundle.mjs \
  --bundle --minify --format=iife --target=es2019 --legal-comments=none \
  --define:process.env.NODE_ENV='"production"' \
  --outfile=public/vendor/echarts.min.js --log-level=warning

# Size-tuned release profile for the wasm only (the workspace profile serves native binaries).
export CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_PANIC=abort
# Leptos' type-erased components: far fewer generic view instantiations, a much smaller wasm.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--cfg erase_components"
cargo fetch --target wasm32-unknown-unknown
trunk build --release --offline

"$root/scripts/viewer-size.sh"
