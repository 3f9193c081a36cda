#!/usr/bin/env bash
# Exercise 8 on a GPU machine, unattended, results under $OUT (at most 8 files):
#   1. FlashInfer from .whl/ (tools/device/prepare_flashinfer.sh, run beforehand where there is network);
#   2. the benchmark (tools/benchmarks/ex08_decode.py): check, targets, configs, sweep, step profile;
#   3. `grade exercise 8` on the solution (correctness on the GPU, bf16, the performance check).
# Each step goes on when the one before fails. About 4 to 5 minutes on an H200.
#     OUT=/some/dir bash tools/device/ex08_decode.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/device-ex08}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 FLASHINFER_CUDA_ARCH_LIST=${FLASHINFER_CUDA_ARCH_LIST:-9.0}
export GRADE_CACHE_DIR=${GRADE_CACHE_DIR:-$(mktemp -d)} GRADE_STATE_DIR=$(mktemp -d)
SITE=$(mktemp -d)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" .whl/*.whl \
    || echo "installing .whl/ failed: FlashInfer will be reported as not importable"
else
  echo "no .whl/ folder: FlashInfer will be reported as not importable (run tools/device/prepare_flashinfer.sh)"
fi
export PYTHONPATH=$PWD:$SITE PATH=$SITE/bin:$PATH
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  nvcc --version | tail -2; } 2>&1 | tee "$OUT/ex08-environment.txt"
timeout 330 python3 -m tools.benchmarks.ex08_decode --out "$OUT" 2>&1 | tee "$OUT/ex08-benchmark.txt" | grep -v "^\s*$" | tail -40
timeout 150 python3 -m grader.commands.cli exercise 8 --from solutions/ex08_decode.py --json > "$OUT/ex08-grading.json" 2> "$OUT/ex08-grading.err"
python3 - "$OUT/ex08-grading.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("grading: no JSON", exc); sys.exit(0)
print("grading: passed" if d["passed"] else "grading: FAILED")
for c in d["checks"]:
    if not c["passed"]:
        print("  ", "skip" if c["skipped"] else "FAIL", c["name"], (c["message"] or "")[:300])
for line in (d.get("performance") or {}).get("lines", []):
    print("  ", line)
PY
