#!/usr/bin/env bash
# Nsight Compute on exercise 8 at B 1 and B 8 (tools/device/decode_ncu.py), raw CSVs and summaries under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/device-ncu}; mkdir -p "$OUT"
export PYTHONPATH=$PWD
for shape in "1 32768 16" "8 8192 16"; do
  name=ncu-$(echo "$shape" | tr ' ' '-')
  timeout 240 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section MemoryWorkloadAnalysis --page raw --csv \
    -k 'regex:decode_|read_kernel|pattern_read' python3 tools/device/decode_ncu.py $shape > "$OUT/$name.csv" 2> "$OUT/$name.err"
  python3 tools/device/decode_ncu.py --summary "$(echo "$shape" | tr " " -)=$OUT/$name.csv" || tail -5 "$OUT/$name.err"
done
