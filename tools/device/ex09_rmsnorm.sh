#!/usr/bin/env bash
# Exercise 9 on a lent GPU (an H200 for the committed figures), in one command; results under $OUT.
#
# Here, first:  bash tools/device/prepare_liger.sh      (Liger-Kernel's wheel into .whl/, carried along)
# There:        bash tools/device/ex09_rmsnorm.sh
#
# 1. the benchmark (tools/benchmarks/ex09_rmsnorm.py: peers, fp32, sweeps, the training step),
#    at most ~4 minutes, its JSON rewritten after each part;
# 2. `grade exercise 9` on the solution, on the GPU (correctness at GPU sizes, determinism, performance);
# 3. the atomics variant's determinism check on the GPU (three runs compared bit for bit);
# 4. with NATURAL=1, `grade exercise 9` on every file of grader/exercises/ex09_rmsnorm/natural (about a minute each).
# GRADE=0 runs the benchmark only (steps 2 and 3 take about two minutes, most of it compiling).
# Writes: <gpu>-ex09-rmsnorm.json, ex09-bench.txt, ex09-solution.json, ex09-grading.txt (4 files).
set -uo pipefail
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
OUT=${OUT:-build/device}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
else
  echo "no .whl/*.whl: Liger-Kernel will be reported as not installed (run tools/device/prepare_liger.sh first)"
fi
export GRADE_CACHE_DIR=$(mktemp -d) GRADE_STATE_DIR=$(mktemp -d)
log=$OUT/ex09-grading.txt; : > "$log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv,noheader | tee -a "$log"

timeout 330 python3 -m tools.benchmarks.ex09_rmsnorm --out "$OUT" > "$OUT/ex09-bench.txt" 2>&1
echo "== benchmark: exit $?" | tee -a "$log"

if [ "${GRADE:-1}" = 1 ]; then
python3 -m grader.commands.cli exercise 9 --from solutions/ex09_rmsnorm.py --json > "$OUT/ex09-solution.json" 2>> "$log"
echo "== solution graded on the GPU: exit $?" | tee -a "$log"
python3 - "$OUT/ex09-solution.json" <<'PY' | tee -a "$log"
import json, sys
d = json.load(open(sys.argv[1]))
print("passed:", d["passed"], "mode:", d["mode"])
for c in d["checks"]:
    if not c["passed"]:
        print("  ", "skip" if c["skipped"] else "FAIL", c["name"], (c["message"] or "")[:300])
p = d.get("performance") or {}
print("   performance:", {k: p.get(k) for k in ("fraction", "achieved_gbps", "ceiling_gbps", "ms", "verdict")})
print("   backward:", p.get("backward"))
for line in p.get("lines", []):
    print("     ", line)
PY

python3 -m pytest -q -p no:cacheprovider -p grader.judge.plugin --learner-file grader/exercises/ex09_rmsnorm/wrong/dweight_atomics.py \
  grader/exercises/ex09_rmsnorm/spec.py -k dweight_deterministic --tb=line 2>&1 | grep -E "GradeFailure|[0-9]+ (passed|failed)" | tail -2 \
  | cut -c1-400 | tee -a "$log"
echo "== atomics variant on the GPU (expected: 1 failed, \`dweight\` came out different)" | tee -a "$log"
fi

if [ "${NATURAL:-0}" = 1 ]; then
  for f in grader/exercises/ex09_rmsnorm/natural/*.py; do
    python3 -m grader.commands.cli exercise 9 --from "$f" --json | python3 -c "
import json, sys; d = json.load(sys.stdin); bad = [c['name'] + ': ' + c['message'][:160] for c in d['checks'] if not c['passed'] and not c['skipped']]
print('natural $(basename "$f"):', 'passed' if d['passed'] else 'FAILED', bad[:2])" | tee -a "$log"
  done
fi
tail -30 "$OUT/ex09-bench.txt"
