#!/usr/bin/env bash
# GPU run: the judge's clock with 8 sets and with K sized by grader.judge.clock.sets_for (tools/device/timing_probe.py),
# then grading with it: the solutions of exercises 1, 8, 9 and 10, and the natural files of 8, 9 and 10 (performance).
# Logs to $OUT; a short summary last.
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${OUT:-build/judge-clock-grading}; mkdir -p "$RESULTS"; OUT=$(mktemp -d)
# The device tool brings back 8 files: the summary, the probe's JSON and one archive of the rest.
trap 'tar czf "$RESULTS/judge-clock-grading.tar.gz" -C "$OUT" . ; cp "$OUT/summary.txt" "$OUT/timing_probe.json" "$RESULTS/" 2>/dev/null' EXIT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 GRADE_CACHE_DIR=$(mktemp -d) GRADE_STATE_DIR=$(mktemp -d)
say() { echo "$@" | tee -a "$OUT/summary.txt"; }
say "== $(date -u +%FT%TZ) $(python3 -c 'import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)')"
s=$SECONDS; timeout ${TP:-200} python3 tools/device/timing_probe.py > "$OUT/timing_probe.log" 2>&1
say "== timing probe ($((SECONDS-s)) s)"; grep -A10 "^=== judge" "$OUT/timing_probe.log" >> "$OUT/summary.txt"
for n in ${SOLUTIONS-1 9 10 8}; do
  f=$(ls solutions/ex0${n}_*.py 2>/dev/null || ls solutions/ex${n}_*.py); s=$SECONDS
  timeout 150 python3 -m grader.commands.cli exercise "$n" --from "$f" --json > "$OUT/grade-ex$n.json" 2> "$OUT/grade-ex$n.err"
  say "== ex$n solution ($((SECONDS-s)) s): $(python3 - "$OUT/grade-ex$n.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("no JSON", exc); sys.exit(0)
p = d.get("performance") or {}
t = p.get("timing") or {}
print("passed" if d["passed"] else "FAILED", "fraction", p.get("fraction"), "dobench_ratio", t.get("dobench_ratio"),
      "overhead_ms", t.get("round_overhead_ms"), "|", p.get("verdict"))
PY
)"
done
if [ -n "${NATURAL-ex09/textbook_formulas.py,ex09/interleaved_rows.py,ex09/hf_casting.py,ex10/per_lane.py,ex10/split_kernels.py,ex08/lse_partials.py}" ]; then
  s=$SECONDS
  timeout ${TN:-240} python3 tests/gpu_record.py --out "$OUT" --parts natural --performance-only --minutes 3.5 \
    --files "${NATURAL-ex09/textbook_formulas.py,ex09/interleaved_rows.py,ex09/hf_casting.py,ex10/per_lane.py,ex10/split_kernels.py,ex08/lse_partials.py}" \
    > "$OUT/natural.log" 2>&1
  say "== natural, performance only ($((SECONDS-s)) s)"; tail -12 "$OUT/natural.log" >> "$OUT/summary.txt"
fi
cat "$OUT/summary.txt"
