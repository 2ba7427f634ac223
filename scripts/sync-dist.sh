# Sourced by scripts/build-viewer.sh and scripts/prebuilt-viewer.sh (from the checkout's root):
# dist/ made the same as a built viewer, replacing only the files whose bytes differ. The others
# keep their times, so the collector, which embeds dist/ and is rebuilt when a file in it is
# newer (collector/build.rs), is not rebuilt (over a minute on two cores) for a viewer that did
# not change.
#   sync_dist FROM [KEEP]   # files of dist/ that FROM lacks are removed, those under dist/KEEP/ aside
sync_dist() {
  local from=$1 keep=${2:-}
  mkdir -p dist
  (cd "$from" && find . -type f) | while IFS= read -r file; do
    if ! cmp -s "$from/$file" "dist/$file"; then
      mkdir -p "dist/$(dirname "$file")"
      cp "$from/$file" "dist/$file"
    fi
  done
  (cd dist && find . -type f) | while IFS= read -r file; do
    if [ -n "$keep" ]; then
      case "$file" in "./$keep"/*) continue ;; esac
    fi
    [ -e "$from/$file" ] || rm "dist/$file"
  done
  find dist -mindepth 1 -type d -empty -delete
}
