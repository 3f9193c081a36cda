#!/usr/bin/env bash
# GPU run after the judge's clock frees the shared sets between timings (torch.cuda.ipc_collect): the probe's
# exercise 9 case, then exercise 9's solution and natural files graded again. Summary and probe JSON to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${OUT:-build/judge-clock-ex09}; mkdir -p "$RESULTS"; OUT=$(mktemp -d)
trap 'tar czf "$RESULTS/judge-clock-ex09.tar.gz" -C "$OUT" . ; cp "$OUT/summary.txt" "$OUT/timing_probe.json" "$RESULTS/" 2>/dev/null' EXIT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 GRADE_CACHE_DIR=$(mktemp -d) GRADE_STATE_DIR=$(mktemp -d)
say() { echo "$@" | tee -a "$OUT/summary.txt"; }
say "== $(date -u +%FT%TZ) $(python3 -c 'import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)')"
s=$SECONDS; PROBE_CASES="${PROBE_CASES:-ex01 n=2^24,ex09 forward 16384x4096 bf16}" timeout 150 python3 tools/device/timing_probe.py > "$OUT/timing_probe.log" 2>&1
say "== timing probe ($((SECONDS-s)) s)"; grep -A6 "^=== do_bench" "$OUT/timing_probe.log" >> "$OUT/summary.txt"
s=$SECONDS; timeout 150 python3 -m grader.commands.cli exercise 9 --from solutions/ex09_rmsnorm.py --json > "$OUT/grade-ex9.json" 2> "$OUT/grade-ex9.err"
say "== ex9 solution ($((SECONDS-s)) s)"
s=$SECONDS; timeout 200 python3 tests/gpu_record.py --out "$OUT" --parts natural --performance-only --minutes 2.5 \
  --files ex09/textbook_formulas.py,ex09/interleaved_rows.py,ex09/hf_casting.py > "$OUT/natural.log" 2>&1
say "== natural ($((SECONDS-s)) s)"; tail -5 "$OUT/natural.log" >> "$OUT/summary.txt"
python3 - "$OUT/grade-ex9.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1])); p = d["performance"]
print("ex9 solution", d["passed"], p["verdict"], "sets", p["timing"]["sets"], "ratio", p["timing"]["dobench_ratio"])
PY
