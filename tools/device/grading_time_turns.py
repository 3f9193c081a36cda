"""On a GPU: how long an honest grading takes with the course before its second round of trust work and
with the course now, graded in turns so that both meet the same state of the card.

    mkdir -p before30_tree && git archive BASE grader solutions exercises pyproject.toml docs/measurements \
        | tar -x -C before30_tree
    PYTHONPATH=. python3 tools/device/grading_time_turns.py --before-tree before30_tree --out $OUT/turns.json

Three graders, one after the other in every round, on the same solution file (this checkout's):

``before``
    ``--before-tree``: the course before the sandbox hid, limited and dropped at every level (the
    learner's process then kept the judge's uid on a GPU; the folder travels untracked, never committed);
``now``
    this checkout as a learner runs it: as root on a GPU the judge becomes the sandbox user;
``now-root-judge``
    this checkout with the judge kept root (``GRADE_SANDBOX_GPU_USER=judge``): what the sandbox user
    itself costs, apart from the checks added since.

Each row is one ``grade exercise N --from FILE --json`` (wall seconds, verdict, fraction). One measured
ceiling serves every grading; each grader keeps its own Triton cache between rounds, as a learner's
``grade exercise`` does, so the first round of each pays its compiles and the later ones show the warm cost.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))  # tools.device.provenance, run as a script

from tools.device import grade_json  # noqa: E402
SEED = 20261206
METHOD = ("grade exercise N --from FILE --json by three graders in turns, every round (before: the course before "
          "its second round of trust work, the learner's process then kept the judge's uid; now: this checkout, the "
          "judge becomes the sandbox user; now-root-judge: this checkout with GRADE_SANDBOX_GPU_USER=judge); seconds "
          "is the whole grading's wall time; one measured ceiling per tree; each grader keeps its Triton cache, so "
          "round 1 pays the compiles and warm_median_s is the median of the later rounds")
FILES = {1: "solutions/ex01_vector_add.py", 2: "solutions/ex02_bias_gelu.py", 9: "solutions/ex09_rmsnorm.py"}


def grade(tree: Path, number: int, file: Path, cache: str, home: str, env_extra: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), GRADE_CACHE_DIR=cache, GRADE_STATE_DIR=home, HOME=home,
               PYTHONUNBUFFERED="1", **env_extra)
    row, result = grade_json.grade(tree, number, file, seed=SEED, env=env, digits=2)
    if result is None:
        return row
    perf = result.get("performance") or {}
    return {**row, "passed": result.get("passed"), "fraction": perf.get("fraction"), "verdict": perf.get("verdict"),
            "sandbox": result.get("sandbox"), "checks": len(result.get("checks", []))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before-tree", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--exercises", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=5.0)
    args = parser.parse_args()
    before = args.before_tree.resolve()
    if not (before / "grader").is_dir():
        parser.error(f"{before} is not a copy of the course (no grader/)")
    graders = {"before": (before, {}), "now": (ROOT, {}), "now-root-judge": (ROOT, {"GRADE_SANDBOX_GPU_USER": "judge"})}
    homes = {name: tempfile.mkdtemp(prefix=f"turns-{name}-") for name in graders}
    for home in homes.values():
        os.chmod(home, 0o755)
    caches = {tree: grade_json.ceiling_cache(tree, "turns-ceiling-") for tree, _ in graders.values()}
    rows: list[dict] = []
    deadline = time.monotonic() + args.minutes * 60
    for number in args.exercises:
        for round_number in range(1, args.rounds + 1):
            for name, (tree, extra) in graders.items():
                if time.monotonic() > deadline:
                    row = {"not_run": "past --minutes"}
                else:
                    row = grade(tree, number, ROOT / FILES[number], caches[tree], homes[name], extra)
                row.update(grader=name, exercise=number, round=round_number)
                rows.append(row)
                print(json.dumps(row)[:400], flush=True)
    from tools.device import provenance  # imports torch: after the gradings, which start their own processes

    summary = []
    for number in args.exercises:
        for name in graders:
            warm = [r["seconds"] for r in rows if r["exercise"] == number and r["grader"] == name
                    and r.get("round", 0) > 1 and r.get("passed")]
            summary.append({"exercise": number, "grader": name, "warm_median_s": statistics.median(warm) if warm else None,
                            "warm_runs": len(warm)})
    base = {s["exercise"]: s["warm_median_s"] for s in summary if s["grader"] == "before"}
    for s in summary:
        if s["warm_median_s"] and base.get(s["exercise"]):
            s["growth"] = round(s["warm_median_s"] / base[s["exercise"]] - 1, 3)
    record = {"meta": provenance.header(seed=SEED, method=METHOD),
              "rows": rows, "summary": summary}
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{'ex':>3} {'grader':<16}{'warm median s':>14}{'growth':>8}")
    for s in summary:
        print(f"{s['exercise']:>3} {s['grader']:<16}{s['warm_median_s'] or '':>14}{s.get('growth', ''):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
