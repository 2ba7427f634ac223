#!/usr/bin/env bash
# Writes what users read off the bundled reports and the import fixtures (summary text and JSON,
# the Which-configuration comparison, validate, import) into OUT, one file per output, so two
# builds can be compared with `diff -r`: a restructuring must leave every file identical.
#   bash scripts/outputs-snapshot.sh BIN INPUTS OUT
# BIN: an infermeter binary; INPUTS: a folder holding data/reports and tests/imports (e.g.
# `git archive HEAD data/reports tests/imports | tar -x -C INPUTS`, so both builds read the
# same files).
set -euo pipefail
bin=$1 inputs=$2 out=$3
mkdir -p "$out"
reports=("$inputs"/data/reports/*.json)
for r in "${reports[@]}"; do
  name=$(basename "$r" .json)
  "$bin" summary "$r" >"$out/$name.summary.txt" 2>&1 || true
  "$bin" summary --json "$r" >"$out/$name.summary.json" 2>&1 || true
  "$bin" summary --measured-only --slo ttft=1s,tpot=30ms "$r" >"$out/$name.summary-slo.txt" 2>&1 || true
  "$bin" validate "$r" >"$out/$name.validate.txt" 2>&1 || true
done
gpus=("$inputs"/data/reports/sim-llama-3.1-8b-{h100-sxm,h200,b200,2x-h100-sxm-tp}.json)
for json in "" --json; do
  "$bin" summary $json "${gpus[@]}" --usd-per-gpu-hour H100=2.5,H200=3.5,B200=5 --users 500 \
    --slo ttft=2s,tpot=50ms >"$out/comparison$json.txt" 2>&1 || true
done
i=0
for f in "$inputs"/tests/imports/vllm/c1.json "$inputs"/tests/imports/aiperf/* \
  "$inputs"/tests/imports/guidellm/benchmarks.json "$inputs"/tests/imports/inference-perf; do
  i=$((i + 1))
  "$bin" import "$f" --out "$out/import-$i.json" --force 2>&1 | sed "s|$out|OUT|g; s|$inputs|INPUTS|g" >"$out/import-$i.log" || true
  # When the import ran is not part of what it read.
  [ -f "$out/import-$i.json" ] && sed -i '/"imported_at"\|"finished_at_import"/d' "$out/import-$i.json"
  "$bin" summary "$f" >"$out/import-$i.summary.txt" 2>&1 || true
done
echo "outputs-snapshot.sh: $(find "$out" -type f | wc -l) files in $out"
