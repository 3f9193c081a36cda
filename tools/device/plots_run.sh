#!/usr/bin/env bash
# One H200 run behind the softmax plots, the roofline and chapter 2's zeros_like section: exercises 3, 4
# and 5 with their peers (exercise 3's sweep times all three Triton schedules in turns), the roofline's
# points and a zeros_like before a kernel, in one driver call: every file gets the same meta.run.
#   bash tools/device/plots_run.sh        # results under $OUT (or build/plots-run), then copy the JSON
#                                          # files into docs/measurements/
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${OUT:-build/plots-run}; mkdir -p "$RESULTS/measurements"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 GRADE_CACHE_DIR=$(mktemp -d) GRADE_STATE_DIR=$(mktemp -d)
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
} 2>&1 | tee "$RESULTS/log.txt"
timeout ${PLOTS_RUN_LIMIT_S:-420} python3 -m tools.benchmarks zeros_like roofline ex05_online_softmax \
  ex04_softmax_persistent ex03_softmax --out "$RESULTS/measurements" 2>&1 | tee -a "$RESULTS/log.txt"
