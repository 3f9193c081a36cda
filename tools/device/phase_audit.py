"""On an NVIDIA GPU: grade the phase attacks and the solutions of exercises 1-3 with two graders.

    PYTHONPATH=. python tools/device/phase_audit.py --base DIR --out FILE.json [--minutes 8]

``--base`` is a copy of the course at the commit before the grader made every call the same way
and audited the timed calls' kernels (``git archive <commit> | tar -x -C DIR``: the grader, the
solutions, the exercises); this checkout is the grader after. Each row is one ``grade exercise N
--from FILE --json`` of one tree, in turns (before, after, before, after...) so both meet the
same state of the card: its wall time, the verdict, the performance fraction and, for the grader
after, the kernels its trace saw in the timed rounds. Written to FILE as the rows come in, with
the GPU, the versions and the date (commit it as docs/measurements/h200-phase-audit.json).

The base tree travels with the checkout as an untracked folder, made before the call:

    mkdir -p phases_base && git archive 5f80a60 grader solutions exercises pyproject.toml | tar -x -C phases_base

(5f80a60: the commit the grader after was built on), then on the GPU machine, in one call of about
eight minutes:

    PYTHONPATH=. python tools/device/phase_audit.py --base phases_base --out $OUT/h200-phase-audit.json --minutes 8
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HOSTILE = "grader/exercises/ex01_vector_add/hostile"
#: (grader, exercise, file relative to this checkout), in the order they run: the solutions whose grading
#: time must not grow by more than 10%, each graded by both in turns, then the attacks whose timed calls
#: differ from their watched ones (by the grader before only where that shows what it let through).
JOBS = [
    *[(grader, number, f"solutions/{name}.py") for number, name in
      ((1, "ex01_vector_add"), (2, "ex02_bias_gelu"), (3, "ex03_softmax")) for grader in ("base", "after")],
    ("after", 1, f"{HOSTILE}/phase_allocation_identity.py"),
    ("base", 1, f"{HOSTILE}/phase_allocation_identity.py"),
    ("after", 1, f"{HOSTILE}/phase_size_unwatched.py"),
    ("base", 1, f"{HOSTILE}/phase_size_unwatched.py"),
    ("after", 1, f"{HOSTILE}/phase_size_torch.py"),
    ("after", 1, f"{HOSTILE}/phase_dispatch_stack.py"),
    # The shortest timed calls (tens of µs): the watch now runs in them too, and its cost per call must
    # stay under the kernel's for the fraction to be the kernel's.
    *[(grader, number, f"solutions/{name}.py") for number, name in ((8, "ex08_decode"), (9, "ex09_rmsnorm"))
      for grader in ("base", "after")],
]
SEED = 20261203


def grade(tree: Path, number: int, file: Path, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), GRADE_CACHE_DIR=cache, GRADE_STATE_DIR=tempfile.mkdtemp(),
               PYTHONUNBUFFERED="1")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "grader.cli", "exercise", str(number), "--from", str(file),
                           "--json", "--seed", str(SEED)], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=400)
    seconds = time.monotonic() - started
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return {"seconds": round(seconds, 1), "exit": done.returncode, "error": (done.stderr or done.stdout)[-1500:]}
    perf = result.get("performance") or {}
    failed = [{"name": c["name"], "message": (c.get("message") or "")[:400]}
              for c in result.get("checks", []) if not c.get("passed") and not c.get("skipped")]
    return {"seconds": round(seconds, 1), "exit": done.returncode, "passed": result.get("passed"),
            "failed": failed[:4], "fraction": perf.get("fraction"), "verdict": perf.get("verdict"),
            "kernels": (perf.get("timing") or {}).get("kernels")}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--minutes", type=float, default=8.0)
    args = parser.parse_args()
    import torch
    import triton

    record = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
              "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d"), "seed": SEED,
              "method": "grade exercise N --from FILE --json, the grader before (base) and after (after) in turns; "
                        "seconds is the whole grading's wall time",
              "rows": []}
    cache = tempfile.mkdtemp()
    subprocess.run([sys.executable, "-c", "from grader import perf; perf.measure_ceiling()"], cwd=ROOT,
                   env=dict(os.environ, PYTHONPATH=str(ROOT), GRADE_CACHE_DIR=cache), check=False)
    deadline = time.monotonic() + args.minutes * 60
    trees = {"base": args.base.resolve(), "after": ROOT}
    for grader_name, number, relative in JOBS:
        file = ROOT / relative  # the attacks exist in this checkout only; the solutions are the same file
        if time.monotonic() > deadline:
            row = {"not_run": "past --minutes"}
        else:
            row = grade(trees[grader_name], number, file, cache)
        row.update(grader=grader_name, exercise=number, file=relative)
        record["rows"].append(row)
        print(json.dumps(row)[:600], flush=True)
        args.out.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
