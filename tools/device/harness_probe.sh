#!/usr/bin/env bash
# The grader's own GPU path on a lent machine: the judge's clock and the sandboxed learner process
# (CUDA IPC across the sandbox), compared with the previous grader (.baseline/, carried) on the
# same solutions, in turns. Results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/device-probe}; mkdir -p "$OUT"
RES=$(mktemp -d)  # everything here, one archive to $OUT at the end (the device tool returns 8 files)
export PYTHONUNBUFFERED=1 GRADE_CACHE_DIR=$(mktemp -d) GRADE_STATE_DIR=$(mktemp -d)
python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
python3 -c "import os; from grader.learner import sandbox; print('sandbox level:', sandbox.available_level(), 'euid', os.geteuid())"
summary() { python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("   no JSON:", exc); sys.exit(0)
print("   passed:", d["passed"], "sandbox:", d.get("sandbox"))
for c in d["checks"]:
    if not c["passed"] and not c["skipped"]:
        print("   FAIL", c["name"], (c["message"] or "")[:400])
p = d.get("performance") or {}
print("   perf:", {k: p.get(k) for k in ("fraction", "achieved_gbps", "ceiling_gbps", "ms", "verdict", "ratio_to_sdpa") if k in p})
print("   timing:", p.get("timing"))
PY
}
for n in ${EXERCISES:-1 3 7}; do
  sol=$(ls solutions/ex0${n}_*.py)
  for who in ${WHO:-new old new old}; do
    start=$(date +%s.%N)
    if [ $who = new ]; then
      PYTHONPATH=$PWD timeout 240 python3 -m grader.commands.cli exercise "$n" --from "$sol" --json > "$RES/ex$n-$who.json" 2> "$RES/ex$n-$who.err"
    else
      (cd .baseline && PYTHONPATH=$PWD timeout 240 python3 -m grader.commands.cli exercise "$n" --from "$sol" --json > "$RES/ex$n-$who.json" 2> "$RES/ex$n-$who.err")
    fi
    end=$(date +%s.%N)
    echo "== exercise $n $who: $(python3 -c "print(f'{$end-$start:.1f}')") s"
    summary "$RES/ex$n-$who.json"
  done
  if ! python3 -c "import json,sys; sys.exit(0 if json.load(open('$RES/ex$n-new.json'))['passed'] else 1)" 2>/dev/null; then
    echo "== exercise $n new, without a PID namespace"
    GRADE_SANDBOX_PIDNS=0 PYTHONPATH=$PWD timeout 240 python3 -m grader.commands.cli exercise "$n" --from "$sol" --json > "$RES/ex$n-nopidns.json" 2> "$RES/ex$n-nopidns.err"
    summary "$RES/ex$n-nopidns.json"
    tail -5 "$RES/ex$n-new.err"
  fi
done
tar czf "$OUT/probe.tar.gz" -C "$RES" . && ls -la "$OUT"
