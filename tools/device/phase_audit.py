"""On an NVIDIA GPU: what watching and auditing the timed calls costs, and whether it catches the GPU phase attack.

    PYTHONPATH=. python tools/device/phase_audit.py --phases-tree phases_tree --out $OUT/h200-phase-audit.json

A file may run a correct Triton kernel while the grader checks it and ``torch.add`` while the judge's
clock runs (``phase_size_torch.py`` below notices the timed calls by their sizes). Catching it on a GPU
means watching the timed calls too, and perhaps auditing them with a CUDA trace of the kernels they
ran. Both were built on branch ``phases`` (the grader's flat layout of before the split) and backed out
of main when, on the H200, exercise 2's solution fell from 89% to 59% of the ceiling under them. This
script finds which of the two costs what, by grading the same files with three graders in turns (so all
three meet the same state of the card):

``main``
    this checkout: timed calls neither watched nor traced;
``watched``
    branch ``phases`` with ``GRADE_KERNEL_AUDIT=0``: timed calls watched (torch ops recorded), not traced;
``audited``
    branch ``phases`` as it is: watched and traced.

Each row is one ``grade exercise N --from FILE --json`` (its wall time, verdict, fraction and, for the
audited grader, the kernels its trace saw). The phases tree travels with the checkout as an untracked
folder, made just before the call and never committed:

    mkdir -p phases_tree && git archive phases grader solutions exercises pyproject.toml | tar -x -C phases_tree

then, on the GPU machine, one call of about eight minutes (``--minutes`` cuts it short; the most
telling gradings run first). Commit what it writes as docs/measurements/h200-phase-audit.json.
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
#: The attack lives in the phases tree's exercise 1 folder (the same path on both sides of the split).
ATTACK = "grader/exercises/ex01_vector_add/hostile/phase_size_torch.py"
#: (grader, exercise, file relative to its tree), in the order they run: exercise 2 first (the
#: solution that lost thirty points), then the attack, then the shortest timed calls (exercises 8, 9:
#: tens of µs, where the watch's cost per call weighs most).
JOBS = [
    *[(grader, 2, "solutions/ex02_bias_gelu.py") for grader in ("main", "watched", "audited")],
    *[(grader, 1, ATTACK) for grader in ("main", "watched", "audited")],
    *[(grader, 2, "solutions/ex02_bias_gelu.py") for grader in ("main", "watched", "audited")],
    *[(grader, 1, "solutions/ex01_vector_add.py") for grader in ("main", "watched", "audited")],
    *[(grader, number, f"solutions/{name}.py") for number, name in ((9, "ex09_rmsnorm"), (8, "ex08_decode"))
      for grader in ("main", "watched", "audited")],
]
SEED = 20261203


def cli_module(tree: Path) -> str:
    """The grade command's module in ``tree``: grader.commands.cli since the split, grader.cli before."""
    return "grader.commands.cli" if (tree / "grader" / "commands" / "cli.py").is_file() else "grader.cli"


def grade(tree: Path, number: int, file: Path, cache: str, env_extra: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), GRADE_CACHE_DIR=cache, GRADE_STATE_DIR=tempfile.mkdtemp(),
               PYTHONUNBUFFERED="1", **env_extra)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", cli_module(tree), "exercise", str(number), "--from", str(file),
                               "--json", "--seed", str(SEED)], cwd=tree, env=env, capture_output=True, text=True,
                              timeout=300)
    except subprocess.TimeoutExpired:
        return {"seconds": round(time.monotonic() - started, 1), "error": "past 300 s"}
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phases-tree", required=True, type=Path, help="git archive of branch phases (see above)")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--minutes", type=float, default=8.0)
    args = parser.parse_args()
    import torch
    import triton

    phases = args.phases_tree.resolve()
    if not (phases / "grader" / "kernel_audit.py").is_file():
        parser.error(f"{phases} is not a copy of branch phases (no grader/kernel_audit.py)")
    trees = {"main": (ROOT, {}), "watched": (phases, {"GRADE_KERNEL_AUDIT": "0"}), "audited": (phases, {})}
    record = {"meta": {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
                       "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d"), "seed": SEED,
                       "method": "grade exercise N --from FILE --json with three graders in turns (main: timed calls "
                                 "bare; watched: branch phases, GRADE_KERNEL_AUDIT=0; audited: branch phases); "
                                 "seconds is the whole grading's wall time; one ceiling cache for all"},
              "rows": []}
    cache = tempfile.mkdtemp()
    subprocess.run([sys.executable, "-c", "from grader import bandwidth; bandwidth.measure_ceiling()"], cwd=ROOT,
                   env=dict(os.environ, PYTHONPATH=str(ROOT), GRADE_CACHE_DIR=cache), check=False)
    deadline = time.monotonic() + args.minutes * 60
    for grader_name, number, relative in JOBS:
        tree, env_extra = trees[grader_name]
        file = tree / relative if (tree / relative).is_file() else phases / relative  # the attack: phases only
        row = {"not_run": "past --minutes"} if time.monotonic() > deadline else \
            grade(tree, number, file, cache, env_extra)
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
