#!/usr/bin/env bash
# Prints what a browser downloads to show a report: the wasm, the JS (wasm-bindgen's loader, the chart
# glue and the ECharts bundle) and the CSS in dist/: raw, as the gzip files build-viewer.sh
# writes beside them with zopfli (what `infermeter view` and nginx gzip_static send), and at
# gzip -9 (what a server compressing on the fly sends at best), with their totals, and what the
# first screen loads: all but the wasm modules split off the main one (`split-*.wasm`, fetched
# when the sections below the first screen are built).
set -euo pipefail
dist=${1:-$(cd "$(dirname "$0")/.." && pwd)/dist}
total_raw=0
total_gz=0
total_gz9=0
first_gz=0
printf '%-44s %10s %10s %10s\n' file raw gzip 'gzip -9'
while IFS= read -r f; do
  raw=$(wc -c <"$f")
  gz9=$(gzip -9 -n -c "$f" | wc -c)
  if [ -f "$f.gz" ]; then gz=$(wc -c <"$f.gz"); else gz=$gz9; fi
  total_raw=$((total_raw + raw))
  total_gz=$((total_gz + gz))
  total_gz9=$((total_gz9 + gz9))
  case "${f##*/}" in split-*.wasm) ;; *) first_gz=$((first_gz + gz)) ;; esac
  printf '%-44s %10d %10d %10d\n' "${f#"$dist"/}" "$raw" "$gz" "$gz9"
done < <(find "$dist" -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' \) | sort)
kb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1024 }'; }
printf "%-44s %10d %10d %10d  (%s KB gzip as served; %s KB at gzip -9)\n" total \
  "$total_raw" "$total_gz" "$total_gz9" "$(kb "$total_gz")" "$(kb "$total_gz9")"
printf '%-44s %10s %10d %10s  (%s KB gzip before the first chart, budget 700 KB; the rest on demand)\n' \
  'first screen' '' "$first_gz" '' "$(kb "$first_gz")"
