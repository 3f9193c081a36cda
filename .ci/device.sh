#!/usr/bin/env bash
# GPU check on a lent machine (not part of CI): grade, test, benchmark; results under $OUT.
#   GRADE_EXERCISES="1 2 3" WRONG_VARIANTS=1 GPU_TESTS=1 BENCH_CLI="3" bash .ci/device.sh [benchmark modules...]
set -uo pipefail
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
# Everything is written to a scratch folder and packed into one archive at the end: the device
# tool brings back at most 8 files.
RESULTS=${OUT:-build/device}; mkdir -p "$RESULTS"
OUT=$(mktemp -d); trap 'tar czf "$RESULTS/results.tar.gz" -C "$OUT" .' EXIT
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
export GRADE_CACHE_DIR=${GRADE_CACHE_DIR:-$(mktemp -d)}   # a cold cache: the first grading measures the ceiling
export GRADE_STATE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv | tee "$OUT/nvidia-smi.txt"
python3 -c "import torch, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)" | tee "$OUT/versions.txt"

grade() { python3 -m grader.commands.cli "$@"; }
log=$OUT/grading.txt; : > "$log"
nn() { printf "%02d" "$1"; }   # exercise 7 -> 07, 10 -> 10 (file names carry two digits)
for n in ${GRADE_EXERCISES:-}; do
  sol=$(ls solutions/ex$(nn "$n")_*.py)
  start=$(date +%s.%N)
  grade exercise "$n" --from "$sol" --json > "$OUT/ex$(nn "$n")-solution.json"; rc=$?
  end=$(date +%s.%N)
  echo "== exercise $n solution: exit $rc in $(python3 -c "print(f'{$end-$start:.1f}')") s" | tee -a "$log"
  python3 - "$OUT/ex$(nn "$n")-solution.json" <<'PY' | tee -a "$log"
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["checks"]:
    if not c["passed"]:
        print("  ", "skip" if c["skipped"] else "FAIL", c["name"], (c["message"] or "")[:300])
p = d.get("performance") or {}
print("   performance:", {k: p.get(k) for k in ("fraction", "achieved_gbps", "ceiling_gbps", "verdict", "tflops", "ratio_to_sdpa") if k in p})
for line in p.get("lines", []):
    print("     ", line)
PY
  if [ "${WRONG_VARIANTS:-0}" = 1 ]; then
    grade exercise "$n" --json > /dev/null; echo "   stub: exit $?" | tee -a "$log"
    for w in grader/exercises/ex$(nn "$n")_*/wrong/*.py; do
      [ -e "$w" ] || continue
      msg=$(grade exercise "$n" --from "$w" --json --timeout 20 | python3 -c "
import json,sys; d=json.load(sys.stdin); bad=[c['message'] for c in d['checks'] if not c['passed'] and c['kind']!='not_run' and not c['skipped']]
print(('PASSED ' if d['passed'] else '') + (bad[0][:160] if bad else 'no failure'))")
      echo "   wrong $(basename "$w"): $msg" | tee -a "$log"
    done
  fi
done
[ -n "${TRAFFIC_EXERCISE:-}" ] && grade exercise "$TRAFFIC_EXERCISE" --from "$(ls solutions/ex$(nn "$TRAFFIC_EXERCISE")_*.py)" --traffic 2>&1 | tee -a "$log" | tail -30
if [ "${GPU_TESTS:-0}" = 1 ]; then
  python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py 2>&1 | tail -15 | tee "$OUT/gpu-tests.txt"
fi
for n in ${BENCH_CLI:-}; do
  grade bench "$n" --from "$(ls solutions/ex$(nn "$n")_*.py)" --out "$OUT/bench" 2>&1 | tee "$OUT/bench-cli-$n.txt" | tail -30
done
if [ -n "${EXTRA_CMD:-}" ]; then
  bash -c "$EXTRA_CMD" 2>&1 | tee "$OUT/extra.txt"
fi
grade doctor 2>&1 | tee "$OUT/doctor.txt"
if [ $# -gt 0 ]; then
  python3 -m tools.benchmarks "$@" --out "$OUT/measurements" 2>&1 | tee "$OUT/benchmarks.txt"
fi
