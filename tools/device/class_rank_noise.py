"""Grade the same small class of exercise 1 twice on one GPU and record how far its ranks move.

The class is the solution, the natural files (correct kernels written other ways) and three wrong
variants (`WRONG`: a missing tail mask, offsets without the block, `x` read twice), copied under student
names; each batch runs `grade batch` with the same seed, one file at a time (nothing else on
the GPU), the correctness case that every mistake shows in, the performance check and the traffic checks, with
``--report`` and ``--gradescope``. The noise is how far each file's fraction of the ceiling moves from one batch to the
next: `grader.catalogue.Grading.rank_margin` must stay above it for the ranks to repeat.

    PYTHONPATH=. python3 tools/device/class_rank_noise.py     # writes $OUT/<gpu>-class-rank-noise.json (h200-, h100-...)

Each batch's summary.json, report.html and Gradescope results.json are kept beside it (``batch-1/``,
``batch-2/``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import catalogue
from grader.commands import class_scoring

EXERCISE = catalogue.get(1)
#: One correctness case every mistake shows in, the performance check, and the traffic checks (counted in
#: the interpreter on a GPU, where the L2 serves a second read: `grader.commands.isolation.count_traffic`).
SELECT = "(matches_reference and n1025 and fp32) or performance or traffic"
SEED = 20261203
BATCHES = 2
#: Seconds one batch may take (eight files of about 12 s each on the H200, one at a time, and their traffic
#: checks counted in the interpreter).
BATCH_SECONDS = 170
#: Wrong variants in the class: the report's mistakes section and the scores below 100 have something to show.
WRONG = ("no_tail_mask.py", "offsets_without_block.py", "reads_x_twice.py")


def make_class(folder: Path) -> list[str]:
    folder.mkdir(parents=True)
    shutil.copy(EXERCISE.solution_path, folder / "solution.py")
    for path in sorted(EXERCISE.natural_dir.glob("*.py")):
        shutil.copy(path, folder / path.name)
    for name in WRONG:
        shutil.copy(EXERCISE.wrong_dir / name, folder / f"wrong_{name}")
    return sorted(p.name for p in folder.glob("*.py"))


def grade(folder: Path, out: Path, state: Path, cache: Path) -> dict | None:
    command = [sys.executable, "-m", "grader.commands.cli", "batch", str(folder), "--exercise", str(EXERCISE.number),
               "--seed", str(SEED), "--select", SELECT, "--jobs", "1", "--out", str(out),
               "--report", str(out / "report.html"), "--gradescope"]
    started = time.monotonic()
    # One ceiling cache for both batches: the first file measures the card's ceiling, every file is a fraction of it.
    env = dict(os.environ, GRADE_STATE_DIR=str(state), GRADE_CACHE_DIR=str(cache))
    batch = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        printed, _ = batch.communicate(timeout=BATCH_SECONDS)
    except subprocess.TimeoutExpired:  # SIGTERM: the batch stops its runs and keeps what it graded
        batch.terminate()
        printed, _ = batch.communicate(timeout=30)
        print(f"the batch ran past {BATCH_SECONDS} s; keeping what it wrote", flush=True)
    print(printed[-3000:], flush=True)
    summary = out / "summary.json"
    if not summary.is_file():
        return None
    records = json.loads(summary.read_text())
    records["wall_seconds"] = round(time.monotonic() - started, 1)
    return records


def standings(records: dict) -> dict[str, class_scoring.Standing]:
    found = {}
    for record in records["submissions"]:
        result = record.get("result") or {}
        name = Path(record["file"]).name
        fraction = class_scoring.leaderboard_value(result.get("mode"), result.get("performance"))
        found[name] = class_scoring.Standing(name, float(record["score"]), fraction)
    return found


def main() -> None:
    out = Path(os.environ.get("OUT", "."))
    scratch = Path(tempfile.mkdtemp(prefix="class-rank-noise-"))
    names = make_class(scratch / "class")
    batches = []
    for i in range(1, BATCHES + 1):
        records = grade(scratch / "class", out / f"batch-{i}", scratch / f"state-{i}", scratch / "cache")
        if records is not None:
            batches.append(records)
    rows = []
    per_batch = [standings(b) for b in batches]
    ranks_exact = [class_scoring.ranks(s.values(), 0.0) for s in per_batch]
    for name in names:
        fractions = [s[name].fraction if name in s else None for s in per_batch]
        measured = [f for f in fractions if f is not None]
        rows.append({"file": name, "fractions": fractions, "scores": [s[name].score if name in s else None
                                                                       for s in per_batch],
                     "spread": round(max(measured) - min(measured), 4) if len(measured) > 1 else None,
                     "ranks_exact": [r.get(name) for r in ranks_exact]})
    spreads = [r["spread"] for r in rows if r["spread"] is not None]
    first = next((r.get("result") for b in batches for r in b["submissions"] if (r.get("result") or {})
                  .get("performance")), None) or {}
    performance = first.get("performance") or {}
    meta = {"gpu": performance.get("gpu"), "driver": performance.get("driver"), **(first.get("versions") or {}),
            "date": time.strftime("%Y-%m-%d"), "command": "PYTHONPATH=. python3 tools/device/class_rank_noise.py",
            "exercise": EXERCISE.number, "select": SELECT, "seed": SEED, "batches": len(batches),
            "batch_wall_seconds": [b.get("wall_seconds") for b in batches],
            "notes": ["the same class (exercise 1's solution, natural files and wrong variants) graded twice with `grade batch`, "
                      "one file at a time, same seed; spread = max - min of a file's fraction of the ceiling"]}
    summary = {"largest_spread": max(spreads) if spreads else None,
               "ranks_repeat_exact": len(ranks_exact) > 1 and all(r == ranks_exact[0] for r in ranks_exact)}
    record = analyse({"meta": meta, "summary": summary, "rows": rows})
    (out / f"{gpu_slug(meta['gpu'])}-class-rank-noise.json").write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record["summary"]), flush=True)


def gpu_slug(name: str | None) -> str:
    """The file's prefix: "h200" for an NVIDIA H200, "h100" for an NVIDIA H100 80GB HBM3."""
    words = (name or "unknown gpu").replace("NVIDIA", "").split()
    return words[0].lower() if words else "gpu"


def analyse(record: dict) -> dict:
    """The record with what its fractions say of margins: ``class_range`` (the spread of the whole class in
    the first batch), ``margin_ranks_repeat_from`` (the smallest margin, in steps of half a point up to ten
    points, from which every batch ranks the class alike at every larger step too), and each row's ranks
    at the grader's default margin (``ranks_with_margin``, by `grader.commands.class_scoring.ranks`)."""
    rows = record["rows"]
    batches = len(rows[0]["fractions"])

    def ranked(margin: float) -> list[dict]:
        return [class_scoring.ranks([class_scoring.Standing(r["file"], r["scores"][b], r["fractions"][b])
                                     for r in rows if r["scores"][b] is not None], margin) for b in range(batches)]

    def alike(margin: float) -> bool:
        every = ranked(margin)
        return all(r == every[0] for r in every)

    steps = [i / 200 for i in range(0, 21)]
    repeat_from = next((m for i, m in enumerate(steps) if all(alike(n) for n in steps[i:])), None)
    margin = EXERCISE.grading.rank_margin
    at_default = ranked(margin)
    for row in rows:
        row["ranks_with_margin"] = [r.get(row["file"]) for r in at_default]
    first = [r["fractions"][0] for r in rows if r["fractions"][0] is not None]
    record["meta"]["default_rank_margin"] = margin
    record["summary"].update({"class_range": round(max(first) - min(first), 4) if first else None,
                              "margin_ranks_repeat_from": repeat_from,
                              "ranks_repeat_with_margin": alike(margin)})
    return record


if __name__ == "__main__":
    if sys.argv[1:2] == ["--analyse"]:  # a recorded run read again with the grader's ranks and margin of now
        path = Path(sys.argv[2])
        path.write_text(json.dumps(analyse(json.loads(path.read_text())), indent=1) + "\n")
        print(json.dumps(json.loads(path.read_text())["summary"]))
    else:
        main()
