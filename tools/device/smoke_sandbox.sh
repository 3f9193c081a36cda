# The sandbox on a GPU: grade exercise 1's solution (JSON under $OUT) and exercise 2's, and list what a run left in /dev/shm
# (the driver leaves the judge's own cuda.shm.* files; the sandbox keeps those). Results: h200-sandbox-cuda-ipc.json.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 GRADE_CACHE_DIR=$(mktemp -d) GRADE_STATE_DIR=$(mktemp -d)
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
g() { name=$1; shift; s=$(date +%s)
  env "$@" timeout 150 python3 -m grader.commands.cli exercise 1 --from solutions/ex01_vector_add.py --json > $OUT/$name.json 2>$OUT/$name.err
  echo "$name rc=$? in $(( $(date +%s)-s )) s"; python3 - $OUT/$name.json <<'PY'
import json,sys
try: d=json.load(open(sys.argv[1]))
except Exception as e: print("  no json", e); sys.exit()
for c in d["checks"]:
    if not c["passed"] and not c.get("skipped"): print("  FAIL", c["name"], (c.get("message") or "")[:600])
p=d.get("performance") or {}; print("  passed", d["passed"], "perf", {k:p.get(k) for k in ("fraction","verdict")})
PY
}
ls /dev/shm > $OUT/shm-before.txt
g default
ls /dev/shm > $OUT/shm-after.txt; diff $OUT/shm-before.txt $OUT/shm-after.txt && echo "/dev/shm: nothing left behind"
python3 -m grader.commands.cli exercise 2 --from solutions/ex02_bias_gelu.py 2>&1 | tail -4
