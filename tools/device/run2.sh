#!/usr/bin/env bash
# GPU run: bf16 agreement data, exercise 1 graded by the calibrated judge clock, exercise 3's sweep,
# exercise 8's benchmark (FlashInfer from .whl/). Every log goes to files; one archive to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/run2}; mkdir -p "$OUT"; RES=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD GRADE_CACHE_DIR=$RES/cache GRADE_STATE_DIR=$(mktemp -d)
finish() { tar czf "$OUT/run2.tar.gz" -C "$RES" . ; cp "$RES/summary.txt" "$OUT/" 2>/dev/null; }
trap finish EXIT
say() { echo "$@" | tee -a "$RES/summary.txt"; }
say "== $(date -u +%FT%TZ) $(python3 -c 'import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)')"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >> "$RES/summary.txt"
s=$SECONDS; timeout 100 python3 tests/gpu_record.py --out "$RES" --parts bf16 > "$RES/bf16.log" 2>&1
say "== bf16 ($((SECONDS-s)) s): $(tail -3 "$RES/bf16.log" | tr '\n' ' ')"
s=$SECONDS; timeout 100 python3 -m grader.commands.cli exercise 1 --from solutions/ex01_vector_add.py --json > "$RES/ex01.json" 2> "$RES/ex01.err"
say "== ex01 graded ($((SECONDS-s)) s): $(python3 -c "
import json; d=json.load(open('$RES/ex01.json')); p=d.get('performance') or {}
print(d['passed'], p.get('fraction'), p.get('ms'), (p.get('timing') or {}).get('round_overhead_ms'), (p.get('timing') or {}).get('dobench_ratio'))" 2>&1)"
s=$SECONDS; timeout 170 python3 -m tools.benchmarks.ex03_softmax --out "$RES" > "$RES/ex03.log" 2>&1
say "== ex03 sweep ($((SECONDS-s)) s)"
python3 -m tools.benchmarks.ex03_softmax --summary "$RES/h200-ex03-softmax.json" >> "$RES/summary.txt" 2>&1
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" .whl/*.whl > "$RES/pip.log" 2>&1
s=$SECONDS; EX08_DEADLINE_S=110 PYTHONPATH=$PWD:$SITE PATH=$SITE/bin:$PATH FLASHINFER_CUDA_ARCH_LIST=9.0 \
  timeout 175 python3 -m tools.benchmarks.ex08_decode --out "$RES" > "$RES/ex08.log" 2>&1
say "== ex08 benchmark ($((SECONDS-s)) s)"
tail -45 "$RES/ex08.log" >> "$RES/summary.txt"
cat "$RES/summary.txt"
