#!/usr/bin/env bash
# GPU run: exercises 9 and 10 benchmarked against their peers (Liger-Kernel from .whl/), every solution
# graded by the new grader (the judge's clock, the sandbox), the previous grader (.baseline/) on a few
# for the grading time, and hostile files on the GPU path. Logs to files; one archive to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/run3}; mkdir -p "$OUT"; RES=$(mktemp -d)
export PYTHONUNBUFFERED=1 GRADE_CACHE_DIR=$RES/cache GRADE_STATE_DIR=$(mktemp -d)
finish() { tar czf "$OUT/run3.tar.gz" -C "$RES" . ; cp "$RES/summary.txt" "$OUT/" 2>/dev/null; }
trap finish EXIT
say() { echo "$@" | tee -a "$RES/summary.txt"; }
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" .whl/liger*.whl > "$RES/pip.log" 2>&1
say "== $(date -u +%FT%TZ) $(python3 -c 'import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)')"
if [ "${BENCH:-1}" = 1 ]; then
s=$SECONDS; PYTHONPATH=$PWD:$SITE timeout ${T9:-120} python3 -m tools.benchmarks.ex09_rmsnorm --out "$RES" --budget ${B9:-70} > "$RES/ex09.log" 2>&1
say "== ex09 benchmark ($((SECONDS-s)) s)"; tail -30 "$RES/ex09.log" >> "$RES/summary.txt"
s=$SECONDS; PYTHONPATH=$PWD:$SITE EX10_BUDGET_S=${B10:-70} timeout ${T10:-120} python3 -m tools.benchmarks.ex10_cross_entropy --out "$RES" > "$RES/ex10.log" 2>&1
say "== ex10 benchmark ($((SECONDS-s)) s)"; tail -30 "$RES/ex10.log" >> "$RES/summary.txt"
fi
grade_one() {  # $1 who (new|old), $2 exercise, $3 file
  local s=$SECONDS out="$RES/grade-$1-ex$2-$(basename "$3" .py).json"
  if [ "$1" = new ]; then
    PYTHONPATH=$PWD timeout 120 python3 -m grader.commands.cli exercise "$2" --from "$3" --json > "$out" 2> "${out%.json}.err"
  else
    (cd .baseline && PYTHONPATH=$PWD timeout 120 python3 -m grader.commands.cli exercise "$2" --from "$3" --json > "$out" 2> "${out%.json}.err")
  fi
  say "== $1 ex$2 $(basename "$3") ($((SECONDS-s)) s): $(python3 - "$out" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("no JSON", exc); sys.exit(0)
p = d.get("performance") or {}
t = p.get("timing") or {}
bad = [c["name"] + ": " + (c["message"] or "")[:160] for c in d["checks"] if not c["passed"] and not c["skipped"]]
print("passed" if d["passed"] else "FAILED", "fraction", p.get("fraction"), "ms", p.get("ms"),
      "dobench_ratio", t.get("dobench_ratio"), "overhead", t.get("round_overhead_ms"), "|", "; ".join(bad[:2]))
PY
)"
}
for n in ${OLD-1 3}; do
  f=$(ls solutions/ex0${n}_*.py 2>/dev/null || ls solutions/ex${n}_*.py)
  grade_one new "$n" "$f"; grade_one old "$n" "$PWD/$f"
done
for n in ${NEW-2 4 5 6 7 8 9 10}; do
  f=$(ls solutions/ex0${n}_*.py 2>/dev/null || ls solutions/ex${n}_*.py)
  grade_one new "$n" "$f"
done
for h in ${HOSTILE:-}; do grade_one new "${h%%:*}" "${h#*:}"; done
cat "$RES/summary.txt"
