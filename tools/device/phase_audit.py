"""On an NVIDIA GPU: what auditing the timed calls costs, and whether it catches the GPU phase attack.

    mkdir -p before_tree && git archive BASE grader solutions exercises pyproject.toml | tar -x -C before_tree
    PYTHONPATH=. python tools/device/phase_audit.py --before-tree before_tree --out $OUT/h200-phase-audit.json

A file may run a correct Triton kernel while the grader checks it and ``torch.add`` while the judge's
clock runs (exercise 1's ``hostile/phase_size_torch.py`` notices the timed calls by their sizes). The
judge now has the learner's process keep a CUDA trace over every counted round and requires its kernels
to be the file's own (`grader.judge.kernel_audit`). This script grades the same files with two graders
in turns, so both meet the same state of the card:

``before``
    ``--before-tree``: a copy of the course before the audit (BASE, the commit before it; the folder
    travels with the checkout untracked and is never committed);
``audited``
    this checkout.

The attack and the solutions whose calls are shortest (exercises 2 and 9, where a per-call cost weighs
most) are graded by both, in turns; then every other solution with a timed check by the audited grader
alone (an honest kernel must pass the audit), then exercise 2 once more by both. Each row is one
``grade exercise N --from FILE --json`` (wall time, verdict, fraction, and the kernels the trace saw).
``--minutes`` cuts the run short; the most telling gradings run first.

The first run of this script (``meta.first_run``) compared the grader of before the split with a branch
that also watched the timed calls (torch ops recorded, as in the checked calls): the watch alone took
exercise 9's forward from 86% to 39% of the ceiling and exercise 2's solution from 91% to 69-81%, so the
timed calls are traced, not watched.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))  # tools.device.grade_json, run as a script

from tools.device import grade_json  # noqa: E402
ATTACK = "grader/exercises/ex01_vector_add/hostile/phase_size_torch.py"
#: (grader, exercise, file relative to its tree), in the order they run.
JOBS = [
    *[(grader, 1, ATTACK) for grader in ("before", "audited")],
    *[(grader, 2, "solutions/ex02_bias_gelu.py") for grader in ("before", "audited")],
    *[(grader, 9, "solutions/ex09_rmsnorm.py") for grader in ("before", "audited")],
    *[("audited", number, f"solutions/{name}.py") for number, name in (
        (8, "ex08_decode"), (10, "ex10_cross_entropy"), (3, "ex03_softmax"), (5, "ex05_online_softmax"),
        (1, "ex01_vector_add"), (4, "ex04_softmax_persistent"), (7, "ex07_flash_attention"))],
    *[(grader, 2, "solutions/ex02_bias_gelu.py") for grader in ("audited", "before")],
]
SEED = 20261203


def grade(tree: Path, number: int, file: Path, cache: str, env_extra: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), GRADE_CACHE_DIR=cache, GRADE_STATE_DIR=tempfile.mkdtemp(),
               PYTHONUNBUFFERED="1", **env_extra)
    row, result = grade_json.grade(tree, number, file, seed=SEED, env=env)
    if result is None:
        return row
    perf = result.get("performance") or {}
    failed = [{"name": c["name"], "message": (c.get("message") or "")[:400]}
              for c in result.get("checks", []) if not c.get("passed") and not c.get("skipped")]
    return {**row, "passed": result.get("passed"), "failed": failed[:4], "fraction": perf.get("fraction"),
            "verdict": perf.get("verdict"), "kernels": (perf.get("timing") or {}).get("kernels"),
            "ms_per_call": (perf.get("timing") or {}).get("ms_per_call")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before-tree", required=True, type=Path, help="git archive of the commit before the audit")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--minutes", type=float, default=7.0)
    args = parser.parse_args()
    import torch
    import triton

    before = args.before_tree.resolve()
    if not (before / "grader" / "commands" / "cli.py").is_file():
        parser.error(f"{before} is not a copy of the course (no grader/commands/cli.py)")
    trees = {"before": before, "audited": ROOT}
    record = {"meta": {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
                       "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d"), "seed": SEED,
                       "method": "grade exercise N --from FILE --json with two graders in turns (before: the course "
                                 "before the audit; audited: timed calls traced); seconds is the whole grading's wall "
                                 "time; one ceiling cache per tree"},
              "rows": []}
    caches = {name: grade_json.ceiling_cache(tree) for name, tree in trees.items()}
    deadline = time.monotonic() + args.minutes * 60
    for grader_name, number, relative in JOBS:
        tree = trees[grader_name]
        file = ROOT / relative  # the same file for both graders (the attack is new with the audit)
        row = {"not_run": "past --minutes"} if time.monotonic() > deadline else grade(tree, number, file, caches[grader_name], {})
        row.update(grader=grader_name, exercise=number, file=relative)
        record["rows"].append(row)
        print(json.dumps(row)[:600], flush=True)
        args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{'grader':<9}{'ex':>3}  {'file':<44}{'s':>7}  verdict")
    for row in record["rows"]:
        print(f"{row['grader']:<9}{row['exercise']:>3}  {row['file'][-44:]:<44}{row.get('seconds', ''):>7}  "
              f"{row.get('verdict') or row.get('error', '')[:60] or [f['name'] for f in row.get('failed', [])]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
