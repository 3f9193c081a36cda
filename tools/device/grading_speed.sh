# How long a learner waits on the GPU, and how far one solution's verdict moves from one grading to the next.
# `bash tools/device/grading_speed.sh`: the waiting cases of tools/speed/grading_time.py on exercise 1 (the fixed
# cost before the first check, cold and in a process that graded before; the solution; a wrong file; the warm ones again
# with the judge forked from its template, GRADE_PRESTART=gpu), then the
# solutions of EXERCISES (default "1 2") graded REPEAT (5) times each: ~9 minutes. Further calls take other
# exercises without the waiting cases, e.g. `SKIP_WAITING=1 EXERCISES="4 5 10" bash tools/device/grading_speed.sh`
# (exercise 7 takes ~100 s a grading, 9 ~50 s: give each a call of its own with REPEAT=5). SELECT=performance grades
# only each solution's performance check, for the spread of the verdict (still a grading of its own each time: ~10-15 s
# on an H100, exercise 7 ~71 s): the rows of docs/measurements/h100-verdict-spread.json.
# Writes $OUT/h200-grading-speed.json (the rows of several calls go into one file of docs/measurements/ together).
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 GRADE_STATE_DIR=$(mktemp -d)
# The device image has no platformdirs (a learner's install has it): the ceiling is cached here instead.
export GRADE_CACHE_DIR=${GRADE_CACHE_DIR:-$(mktemp -d)}
EXERCISES=${EXERCISES:-"1 2"}
REPEAT=${REPEAT:-5}
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else \"no GPU\")"
if [ -z "${SKIP_WAITING:-}" ]; then
  timeout 150 python3 -m tools.speed.grading_time --phase h200 --out $OUT/h200-grading-speed.json \
    --cases first_check first_check_warm solution solution_warm wrong
  # The judge forked from its template on the GPU too (off by default until this passes and times the same).
  GRADE_PRESTART=gpu timeout 100 python3 -m tools.speed.grading_time --phase h200-forked-judge \
    --out $OUT/h200-grading-speed.json --cases first_check_warm solution_warm
fi
timeout 320 python3 -m tools.speed.grading_time --phase h200-noise${SELECT:+-$SELECT} --out $OUT/h200-grading-speed.json \
  --solutions --exercises $EXERCISES --repeat $REPEAT ${SELECT:+--select "$SELECT"}
