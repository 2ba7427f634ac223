#!/usr/bin/env bash
# Prints the raw and gzip size of what a browser downloads to show a report: the wasm, the JS
# (trunk's loader and the ECharts bundle) and the CSS in dist/, and their gzip total.
set -euo pipefail
dist=${1:-$(cd "$(dirname "$0")/.." && pwd)/dist}
total_raw=0
total_gz=0
printf '%-44s %10s %10s\n' file raw gzip
while IFS= read -r f; do
  raw=$(wc -c <"$f")
  gz=$(gzip -9 -c "$f" | wc -c)
  total_raw=$((total_raw + raw))
  total_gz=$((total_gz + gz))
  printf '%-44s %10d %10d\n' "${f#"$dist"/}" "$raw" "$gz"
done < <(find "$dist" -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' \) | sort)
printf '%-44s %10d %10d  (%d KB gzip; budget 500 KB)\n' total "$total_raw" "$total_gz" $((total_gz / 1024))
