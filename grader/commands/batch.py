"""`grade batch DIR --exercise N`: grade a folder of submissions, one isolated run each.

Every ``*.py`` file directly in DIR is one submission; a symbolic link is refused with a sentence
(it would grade the file it points to, the course's solution as well as any other). Each is first compiled here (a file that
does not even parse gets a sentence and a score of 0 without starting a process; its text is
decoded as Python decodes source, so a PEP 263 coding line works as it does in ``grade exercise``),
then graded by `grader.commands.isolation.run_checks` in its own judge and sandboxed learner process, all
with the same seed, so every student meets the same inputs and any verdict can be replayed with
``grade exercise N --from FILE --seed S``. By default the honesty check is strict: a file with code
a learner file never needs (threads, ctypes, frames, the grader...) is refused with a sentence.

One submission cannot touch another: each runs from a private copy of its file, with its own
working folder; the submissions folder, the output folder and the progress files are hidden from
it, and the course is read-only to it (the sandbox, `grader.learner.sandbox`, says how strongly on this
machine). Outputs are written here, by the grading process, after each submission's processes
are gone, each file atomically (a temporary file, then a rename), so an interrupted batch keeps
everything graded so far and a file in the way of one output costs that output, not the batch.

Scores: partial credit by family of checks (correctness, lessons, performance), weighted as the
exercise's manifest says (`grader.commands.class_scoring`), out of ``points`` (default 100). Checks skipped by
design (performance without a GPU) count for nobody; checks not run because an earlier failure stopped
the run (a stub, an import error) count as failed. With a report path, `grader.commands.class_report` writes the
class at a glance (one HTML file) once the batch ends.

Written to the output folder (printed): ``summary.csv`` and ``summary.json``; with
``gradescope=True``, Gradescope's ``results.json`` (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
for a single submission ``<out>/results.json``, the file Gradescope reads when ``<out>`` is
``/autograder/results``; for several, ``<out>/gradescope/<name>.results.json``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader import catalogue
from grader.commands import class_scoring
from grader.wire.results import Kind


@dataclass
class Submission:
    path: Path
    run: object | None = None  # grader.commands.isolation.RunResult
    error: str | None = None  # why it could not be graded at all (does not parse, grader failure)
    seconds: float = 0.0
    grading: catalogue.Grading = catalogue.Grading()  # the exercise's partial credit

    # -- scoring ----------------------------------------------------------------------------
    @property
    def counted(self) -> list:
        """Checks that count: everything except checks skipped by design."""
        if self.run is None:
            return []
        return [c for c in self.run.checks if not (c.skipped and c.kind != Kind.NOT_RUN)]

    @property
    def passed(self) -> bool:
        return self.run is not None and self.error is None and bool(self.run.passed)

    @property
    def checks_passed(self) -> int:
        return sum(1 for c in self.counted if c.passed)

    def score(self, points: float) -> float:
        if self.run is None or self.error is not None or self.run.fatal or not self.counted:
            return 0.0
        return class_scoring.score(self.counted, self.grading, points)

    def failures(self) -> list[str]:
        if self.error is not None:
            return [self.error]
        if self.run is None:
            return []
        messages = [f"{c.name}: {c.message}" for c in self.run.checks
                    if not c.passed and not c.skipped and c.kind != Kind.NOT_RUN]
        if self.run.fatal:
            messages.insert(0, self.run.fatal)
        return messages


def precheck(path: Path) -> str | None:
    """A sentence when the file cannot be graded at all (not text, does not parse); None if it can."""
    from grader.commands import source_allowlist

    try:
        source = source_allowlist.read_source(path)
    except UnicodeDecodeError as exc:
        return (f"{path.name} is not text in its declared encoding (UTF-8 unless a coding line says otherwise; "
                f"byte {exc.start}): is it a Python file?")
    except SyntaxError as exc:  # tokenize says so for bytes that are no encoding at all
        if "encoding" in str(exc):
            return (f"{path.name} is not text in its declared encoding (UTF-8 unless a coding line says "
                    "otherwise): is it a Python file?")
        return f"{path.name} does not parse: {exc}"
    except LookupError as exc:
        return f"{path.name} declares an encoding Python does not know: {exc}"
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
    """Every ``*.py`` directly in ``folder``: files, and symbolic links (which `refusal` refuses)."""
    return sorted(p for p in folder.glob("*.py") if (p.is_symlink() or p.is_file()) and p.name != "__init__.py"
                  and not p.name.startswith("."))


def refusal(path: Path) -> str | None:
    """A sentence when ``path`` is not a submission's own file: a symbolic link points elsewhere
    (a link to the course's solution would be graded as the student's)."""
    if path.is_symlink():
        return (f"{path.name} is a symbolic link, not a file: the class grader grades only the files a student "
                "handed in, so it was not graded (submit the file itself)")
    return None


def grade_all(paths: list[Path], exercise: catalogue.Exercise, *, seed: int, grade: Callable | None = None,
              interpreter: bool = False, timeout: float | None = None, file_timeout: float | None = None,
              select: str | None = None, jobs: int = 1, strict: bool = True, hide: tuple[str, ...] = (),
              on_done: Callable[[Submission], None] | None = None) -> list[Submission]:
    """Grade each file (in parallel up to ``jobs``); never raises because of one submission.

    Ctrl-C (or SIGTERM) stops every run in progress at once and starts nothing new; the
    submissions graded so far have already been handed to ``on_done``."""
    from grader.commands import isolation

    if grade is None:
        grade = isolation.run_checks
    lock = threading.Lock()

    def one(path: Path) -> Submission:
        started = time.monotonic()
        submission = Submission(path=path, error=refusal(path) or precheck(path), grading=exercise.grading)
        if submission.error is None:
            try:
                options = dict(seed=seed, interpreter=interpreter, check_timeout=timeout, select=select)
                if grade is isolation.run_checks:
                    options.update(strict=strict, hide=hide, file_timeout=file_timeout, display=path.name)
                submission.run = grade(exercise, path, **options)
                if grade is isolation.run_checks:
                    # A class graded on a GPU is held to the lessons too: its traffic checks run in the interpreter.
                    submission.run = isolation.count_traffic(submission.run, exercise, path, **options)
            except Exception as exc:  # the grader itself failed on this file: say so, grade the others
                submission.error = f"the grader failed on {path.name}: {type(exc).__name__}: {exc}"
        submission.seconds = round(time.monotonic() - started, 2)
        if on_done is not None:
            with lock:
                on_done(submission)
        return submission

    if jobs <= 1:
        return [one(p) for p in paths]
    pool = ThreadPoolExecutor(max_workers=jobs)  # each run is a child process: threads suffice
    try:
        return list(pool.map(one, paths))
    except BaseException:  # Ctrl-C, SIGTERM: nothing new starts, and the runs in progress end now
        pool.shutdown(wait=False, cancel_futures=True)
        isolation.stop_all()
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
        "checks_not_run": sum(1 for c in (s.run.checks if s.run else []) if c.kind == Kind.NOT_RUN),
        "mode": getattr(s.run, "mode", ""),
        "seconds": s.seconds,
        "first_failure": (s.failures() or [""])[0][:500],
    }


def summary(subs: list[Submission], exercise: catalogue.Exercise, *, seed: int, points: float,
            select: str | None) -> dict:
    from grader.commands import report

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
    credit = class_scoring.credit_per_check((s.grading.family(c.name) for c in s.counted), s.grading, points)
    result["output"] = f"{header}\n{_credit_sentence(s, points)}"
    _add_leaderboard(result, s)
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
        worth = credit[s.grading.family(name)]
        result["tests"].append({"name": name, "score": round(worth * good, 4),
                                "max_score": round(worth * len(counted), 4),
                                "status": "passed" if not failing else "failed",
                                "output": "\n".join(lines), "visibility": "visible"})
    return result


def _credit_sentence(s: Submission, points: float) -> str:
    """How the score was made: each family's share of the points, and what did not count."""
    shares = class_scoring.shares(s.counted, s.grading, points)
    parts = ", ".join(f"{family} {share:g}" for family, share in shares.items())
    extra = ""
    for family in catalogue.FAMILIES:
        if family not in shares and s.grading.weights.get(family):  # its weight went to the others: say why
            skipped = next((c.message for c in s.run.checks if c.skipped and s.grading.family(c.name) == family
                            and c.message), None)
            extra += f"; {skipped or f'{family}: no check in this run'}"
    return f"Partial credit by family of checks, out of {points:g}: {parts}{extra}."


def _add_leaderboard(result: dict, s: Submission) -> None:
    """Gradescope's leaderboard column, only where a GPU measured the kernel."""
    performance = s.run.performance
    value = class_scoring.leaderboard_value(s.run.mode, performance.to_json() if performance else None)
    if value is not None:
        result["leaderboard"] = [{"name": s.grading.leaderboard, "value": value, "order": "desc"}]


class OutputError(Exception):
    """The output folder cannot be used at all (a sentence)."""


def _atomic_write(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file beside it and a rename: never half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


class OutputWriter:
    """The batch's output folder, rewritten after every graded submission (an interrupted batch
    keeps what it graded). A path it cannot write is reported in ``problems``, once, and skipped."""

    def __init__(self, out: Path, exercise: catalogue.Exercise, *, seed: int, points: float, select: str | None,
                 gradescope_format: bool, expected: int | None = None, report: Path | None = None):
        if out.exists() and not out.is_dir():
            raise OutputError(f"--out {out} is a file, not a folder: choose another output folder")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"the output folder {out} cannot be made: {exc.strerror or exc}") from None
        self.out, self.exercise, self.seed, self.points = out, exercise, seed, points
        self.select, self.gradescope_format = select, gradescope_format
        self.report = report  # the class report's path, written once by `finish`
        self.subs: list[Submission] = []
        self.problems: list[str] = []
        self.written: list[Path] = []
        self.single = expected == 1  # Gradescope grades one submission: its results.json goes at the top

    def _write(self, path: Path, text: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(path, text)
        except OSError as exc:
            what = "a folder is in the way" if path.is_dir() else (exc.strerror or str(exc))
            problem = f"could not write {path}: {what}; the other results are written"
            if problem not in self.problems:
                self.problems.append(problem)
            return
        if path not in self.written:
            self.written.append(path)

    def add(self, sub: Submission) -> None:
        self.subs.append(sub)
        self._write_all(self.subs)

    def _write_all(self, subs: list[Submission]) -> None:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for s in sorted(subs, key=lambda s: s.path.name):
            writer.writerow(csv_row(s, self.points))
        self._write(self.out / "summary.csv", buffer.getvalue())
        self._write(self.out / "summary.json", json.dumps(summary(sorted(subs, key=lambda s: s.path.name),
                                                                  self.exercise, seed=self.seed, points=self.points,
                                                                  select=self.select), indent=1) + "\n")
        if self.gradescope_format:
            for s in subs:
                target = (self.out / "results.json" if self.single else
                          self.out / "gradescope" / f"{s.path.stem}.results.json")
                self._write(target, json.dumps(gradescope(s, self.exercise, points=self.points, seed=self.seed),
                                               indent=1) + "\n")

    def finish(self, subs: list[Submission]) -> list[Path]:
        """Write everything once more for the final list and return the paths written."""
        self.single = len(subs) == 1
        self._write_all(subs)
        if self.report is not None:
            self._write_report(subs)
        return self.written

    def _write_report(self, subs: list[Submission]) -> None:
        from grader.commands import class_report

        records = summary(sorted(subs, key=lambda s: s.path.name), self.exercise, seed=self.seed,
                          points=self.points, select=self.select)
        self._write(self.report, class_report.render(records, self.exercise))


def write_outputs(subs: list[Submission], exercise: catalogue.Exercise, out: Path, *, seed: int, points: float,
                  select: str | None, gradescope_format: bool, report: Path | None = None) -> list[Path]:
    """Every output for ``subs`` at once (the batch writes them as it goes, through `OutputWriter`)."""
    writer = OutputWriter(out, exercise, seed=seed, points=points, select=select, gradescope_format=gradescope_format,
                          report=report)
    return writer.finish(subs)
