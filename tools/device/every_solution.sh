# Every solution graded once on the GPU, as a learner's `grade exercise N` grades it, then exercise 1's
# solution again in a process that graded before: whether every solution still passes there, and how
# long each grading takes. One call of about eight minutes on an H200 (exercise 7 alone ~100 s).
#     bash tools/device/every_solution.sh            # writes $OUT/h200-grading-speed.json
#     EXERCISES="8 9" bash tools/device/every_solution.sh
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 GRADE_STATE_DIR=$(mktemp -d)
# The device image has no platformdirs (a learner's install has it): the ceiling is cached here instead.
export GRADE_CACHE_DIR=${GRADE_CACHE_DIR:-$(mktemp -d)}
OUT=${OUT:-build/device}; mkdir -p "$OUT"
EXERCISES=${EXERCISES:-"1 2 3 4 5 6 7 8 9 10"}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout ${SOLUTIONS_TIMEOUT:-470} python3 -m tools.speed.grading_time --phase h200-every-solution \
  --out "$OUT/h200-grading-speed.json" --solutions --exercises $EXERCISES
timeout 90 python3 -m tools.speed.grading_time --phase h200 --out "$OUT/h200-grading-speed.json" \
  --cases first_check_warm solution_warm
