# Sourced by the scripts: one definition of where tools and build outputs live (outside the repo,
# so a fresh clone reuses them).
export INFERMETER_CACHE=${INFERMETER_CACHE:-$HOME/.cache/infermeter}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$INFERMETER_CACHE/target}
# wasm-opt from npm's binaryen must come before Debian's older one.
export PATH="$INFERMETER_CACHE/npm/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export NODE_PATH="$INFERMETER_CACHE/npm/node_modules${NODE_PATH:+:$NODE_PATH}"
