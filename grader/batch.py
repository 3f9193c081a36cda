"""`grade batch DIR --exercise N`: grade a folder of submissions, one isolated run each.

Every ``*.py`` file directly in DIR is one submission. Each is first compiled here (a file that
does not even parse gets a sentence and a score of 0 without starting a process), then graded
by `grader.isolation.run_checks` in its own child process, all with the same seed, so every
student meets the same inputs and any verdict can be replayed with
``grade exercise N --from FILE --seed S``. One submission that hangs, crashes or raises cannot
affect another.

Scores: every check that ran counts one point, scaled so a submission is out of ``points``
(default 100). Checks skipped by design (performance without a GPU) count for nobody; checks
not run because an earlier failure stopped the run (a stub, an import error) count as failed.

Written to the output folder (printed): ``summary.csv`` and ``summary.json``; with
``gradescope=True``, Gradescope's ``results.json`` (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
for a single submission ``<out>/results.json``, the file Gradescope reads when ``<out>`` is
``/autograder/results``; for several, ``<out>/gradescope/<name>.results.json``.
"""

from __future__ import annotations

import csv
import json
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader import catalogue


@dataclass
class Submission:
    path: Path
    run: object | None = None  # grader.isolation.RunResult
    error: str | None = None  # why it could not be graded at all (does not parse, grader failure)
    seconds: float = 0.0

    # -- scoring ----------------------------------------------------------------------------
    @property
    def counted(self) -> list:
        """Checks that count: everything except checks skipped by design."""
        if self.run is None:
            return []
        return [c for c in self.run.checks if not (c.skipped and c.kind != "not_run")]

    @property
    def passed(self) -> bool:
        return self.run is not None and self.error is None and bool(self.run.passed)

    @property
    def checks_passed(self) -> int:
        return sum(1 for c in self.counted if c.passed)

    def score(self, points: float) -> float:
        if self.run is None or self.error is not None or self.run.fatal or not self.counted:
            return 0.0
        return round(points * self.checks_passed / len(self.counted), 2)

    def failures(self) -> list[str]:
        if self.error is not None:
            return [self.error]
        if self.run is None:
            return []
        messages = [f"{c.name}: {c.message}" for c in self.run.checks
                    if not c.passed and not c.skipped and c.kind != "not_run"]
        if self.run.fatal:
            messages.insert(0, self.run.fatal)
        return messages


def precheck(path: Path) -> str | None:
    """A sentence when the file cannot be graded at all (not text, does not parse); None if it can."""
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{path.name} is not UTF-8 text (byte {exc.start}): is it a Python file?"
    except OSError as exc:
        return f"{path.name} could not be read: {exc.strerror or exc}"
    try:
        compile(source, str(path), "exec")
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return f"{path.name} does not parse: {type(exc).__name__}{where}: {exc.msg}"
    except ValueError as exc:  # null bytes
        return f"{path.name} does not parse: {exc}"
    return None


def submissions_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py") if p.is_file() and p.name != "__init__.py"
                  and not p.name.startswith("."))


def grade_all(paths: list[Path], exercise: catalogue.Exercise, *, seed: int, grade: Callable | None = None,
              interpreter: bool = False, timeout: float | None = None, select: str | None = None, jobs: int = 1,
              on_done: Callable[[Submission], None] | None = None) -> list[Submission]:
    """Grade each file (in parallel up to ``jobs``); never raises because of one submission."""
    if grade is None:
        from grader import isolation

        grade = isolation.run_checks

    def one(path: Path) -> Submission:
        started = time.monotonic()
        submission = Submission(path=path, error=precheck(path))
        if submission.error is None:
            try:
                submission.run = grade(exercise, path, seed=seed, interpreter=interpreter, check_timeout=timeout,
                                       select=select)
            except Exception as exc:  # the grader itself failed on this file: say so, grade the others
                submission.error = f"the grader failed on {path.name}: {type(exc).__name__}: {exc}"
        submission.seconds = round(time.monotonic() - started, 2)
        if on_done is not None:
            on_done(submission)
        return submission

    if jobs <= 1:
        return [one(p) for p in paths]
    pool = ThreadPoolExecutor(max_workers=jobs)  # each run is a child process: threads suffice
    try:
        return list(pool.map(one, paths))
    except KeyboardInterrupt:  # Ctrl-C: start nothing new; the runs in progress end with their process
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=False)


# --- output ---------------------------------------------------------------------------------------

CSV_FIELDS = ["file", "passed", "score", "max_score", "checks_passed", "checks_counted", "checks_not_run",
              "mode", "seconds", "first_failure"]


def csv_row(s: Submission, points: float) -> dict:
    return {
        "file": s.path.name,
        "passed": s.passed,
        "score": s.score(points),
        "max_score": points,
        "checks_passed": s.checks_passed,
        "checks_counted": len(s.counted),
        "checks_not_run": sum(1 for c in (s.run.checks if s.run else []) if c.kind == "not_run"),
        "mode": getattr(s.run, "mode", ""),
        "seconds": s.seconds,
        "first_failure": (s.failures() or [""])[0][:500],
    }


def summary(subs: list[Submission], exercise: catalogue.Exercise, *, seed: int, points: float,
            select: str | None) -> dict:
    from grader import report

    return {
        "exercise": exercise.number,
        "title": exercise.title,
        "seed": seed,
        "points": points,
        "select": select,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "passed": sum(1 for s in subs if s.passed),
        "submissions": [
            {**csv_row(s, points), "file": str(s.path), "error": s.error,
             "result": report.to_json(s.run) if s.run is not None else None}
            for s in subs
        ],
    }


def _group(name: str) -> str:
    return name.split("[", 1)[0]


def gradescope(s: Submission, exercise: catalogue.Exercise, *, points: float, seed: int) -> dict:
    """Gradescope's results.json for one submission: one test per group of checks."""
    header = (f"Exercise {exercise.number} · {exercise.title}: "
              f"{'PASSED' if s.passed else 'FAILED'}, {s.checks_passed} of {len(s.counted)} checks passed "
              f"(seed {seed}; replay with `grade exercise {exercise.number} --from {s.path.name} --seed {seed}`).")
    result: dict = {"score": s.score(points), "execution_time": round(s.seconds), "output": header,
                    "visibility": "visible", "stdout_visibility": "hidden", "tests": [],
                    "extra_data": {"exercise": exercise.number, "seed": seed, "mode": getattr(s.run, "mode", None)}}
    if s.run is None or s.error is not None or s.run.fatal or not s.counted:
        why = s.error or getattr(s.run, "fatal", None) or "no checks ran"
        result["tests"].append({"name": "your file can be graded", "score": 0.0, "max_score": points,
                                "status": "failed", "output": why, "visibility": "visible"})
        result["output"] = f"{header}\n{why}"
        return result
    groups: OrderedDict[str, list] = OrderedDict()
    for check in s.run.checks:
        groups.setdefault(_group(check.name), []).append(check)
    counted_ids = {id(c) for c in s.counted}
    total = len(s.counted)
    for name, checks in groups.items():
        counted = [c for c in checks if id(c) in counted_ids]
        if not counted:  # skipped by design: shown, worth nothing
            result["tests"].append({"name": name, "score": 0.0, "max_score": 0.0, "output": checks[0].message,
                                    "visibility": "visible"})
            continue
        good = sum(1 for c in counted if c.passed)
        failing = [c for c in counted if not c.passed]
        lines = [f"{good} of {len(counted)} cases passed."]
        for c in failing[:5]:
            case = c.name[len(name):].strip("[]")
            lines.append(f"[{case}] {c.message or c.kind}" if case else (c.message or c.kind))
        if len(failing) > 5:
            lines.append(f"… and {len(failing) - 5} more failing cases.")
        result["tests"].append({"name": name, "score": round(points * good / total, 4),
                                "max_score": round(points * len(counted) / total, 4),
                                "status": "passed" if not failing else "failed",
                                "output": "\n".join(lines), "visibility": "visible"})
    return result


def write_outputs(subs: list[Submission], exercise: catalogue.Exercise, out: Path, *, seed: int, points: float,
                  select: str | None, gradescope_format: bool) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    csv_path = out / "summary.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for s in subs:
            writer.writerow(csv_row(s, points))
    written.append(csv_path)
    json_path = out / "summary.json"
    json_path.write_text(json.dumps(summary(subs, exercise, seed=seed, points=points, select=select), indent=1) + "\n")
    written.append(json_path)
    if gradescope_format:
        for s in subs:
            target = (out / "results.json" if len(subs) == 1 else
                      out / "gradescope" / f"{s.path.stem}.results.json")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(gradescope(s, exercise, points=points, seed=seed), indent=1) + "\n")
            written.append(target)
    return written
