#!/usr/bin/env bash
# Prints what a browser downloads to show a report: the wasm, the JS (trunk's loader, the chart
# glue and the ECharts bundle) and the CSS in dist/, raw and as the gzip files build-viewer.sh
# writes beside them (and `infermeter view` serves), with their totals.
set -euo pipefail
dist=${1:-$(cd "$(dirname "$0")/.." && pwd)/dist}
total_raw=0
total_gz=0
printf '%-44s %10s %10s\n' file raw gzip
while IFS= read -r f; do
  raw=$(wc -c <"$f")
  if [ -f "$f.gz" ]; then gz=$(wc -c <"$f.gz"); else gz=$(gzip -9 -n -c "$f" | wc -c); fi
  total_raw=$((total_raw + raw))
  total_gz=$((total_gz + gz))
  printf '%-44s %10d %10d\n' "${f#"$dist"/}" "$raw" "$gz"
done < <(find "$dist" -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' \) | sort)
printf "%-44s %10d %10d  (%s KB gzip; budget 500 KB)\n" total "$total_raw" "$total_gz" \
  "$(awk -v b="$total_gz" 'BEGIN { printf "%.1f", b / 1024 }')"
