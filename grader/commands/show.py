"""`grade show N`: record an access map of the learner's function in a child process.

The child (`grader.learner.show_child`) runs in Triton's interpreter whatever the machine,
records one call on the input the exercise's spec chooses (``show_inputs(size)``) and writes the
map as JSON; this side turns a crash or a hang into a sentence and hands the map, as data, to the
drawing (`grader.commands.access_terminal`, `grader.commands.access_figure`). A kernel that writes far past its
guards can kill the interpreter's process: the child is the unit of failure, as in grading.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.learner.access_map import AccessMap
from grader.catalogue import ROOT, Exercise

#: Seconds the child may take: one call of the learner's function on a small input, plus imports.
SHOW_TIMEOUT = 120.0

_SIGNALS = {
    signal.SIGSEGV: "a segmentation fault",
    signal.SIGABRT: "an abort (the C library found the heap corrupted)",
    signal.SIGBUS: "a bus error",
    signal.SIGKILL: "SIGKILL (out of memory?)",
}


@dataclass
class ShowResult:
    """A map, or why there is none: ``usage`` (a bad --size: the caller's mistake) or
    ``problem`` (the learner's file: did not import, crashed, hung)."""

    map: AccessMap | None = None
    usage: str | None = None
    problem: str | None = None


def draws(exercise) -> bool:
    """Whether ``grade show`` can draw this exercise: its spec gives the inputs to draw (``show_inputs``)."""
    return exercise.spec_file.is_file() and "def show_inputs(" in exercise.spec_file.read_text(encoding="utf-8")


def drawn_exercises() -> list[int]:
    """The exercises ``grade show`` draws, in the catalogue's order."""
    from grader import catalogue

    return [e.number for e in catalogue.EXERCISES if draws(e)]


def command(exercise_number: int, learner_file: str | Path | None = None) -> str:
    """The one-line command that draws the map: ``grade show 3 --from grader/exercises/ex03_softmax/wrong/x.py``."""
    line = f"grade show {exercise_number}"
    if learner_file is not None:
        path = Path(learner_file)
        try:
            shown = str(path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            shown = str(path)
        line += f" --from {shown}"
    return line


def _crash(returncode: int, stderr_tail: str) -> str:
    what = _SIGNALS.get(-returncode, f"signal {-returncode}") if returncode < 0 else f"exit status {returncode}"
    detail = next((f" (the C library said: “{line.strip()}”)" for line in stderr_tail.splitlines()
                   if any(m in line for m in ("free():", "corrupted", "double free", "malloc():"))), "")
    if returncode > 0 and not detail:
        last = [line for line in stderr_tail.strip().splitlines() if line.strip()]
        detail = f": {last[-1].strip()}" if last else ""
    return (f"the process drawing the map died with {what}{detail}: your kernel most likely read or wrote far "
            "outside its tensors, past the guard regions the map could show (an unmasked load or store, or an "
            "offset that ignores the row stride)")


def record_in_child(exercise: Exercise, learner_file: str | Path, *, size: str | None = None,
                    timeout: float | None = None) -> ShowResult:
    """Record the access map of ``learner_file``'s function on ``exercise``'s show input."""
    timeout = timeout or SHOW_TIMEOUT
    with tempfile.TemporaryDirectory(prefix="grade-show-") as tmp:
        out = Path(tmp) / "map.json"
        cmd = [sys.executable, "-m", "grader.learner.show_child", str(exercise.spec_file),
               "--learner-file", str(Path(learner_file).resolve()), "--function", exercise.function,
               "--out", str(out)]
        if size is not None:
            cmd += ["--size", str(size)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env.setdefault("PYTHONFAULTHANDLER", "1")
        stderr_path = Path(tmp) / "stderr.txt"
        with open(stderr_path, "wb") as stderr:
            proc = subprocess.Popen(cmd, cwd=os.getcwd(), env=env, stdout=subprocess.DEVNULL, stderr=stderr,
                                    start_new_session=True)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
                return ShowResult(problem=(
                    f"your function did not finish within {timeout:.0f} s on the map's small input: does a loop in "
                    "your kernel or launcher never end (a `while` whose condition never changes, a loop step of 0)?"))
            except BaseException:
                _kill(proc)
                raise
        if not out.is_file():
            return ShowResult(problem=_crash(proc.returncode, stderr_path.read_text(errors="replace")[-4000:]))
        payload = json.loads(out.read_text())
    if "usage" in payload:
        return ShowResult(usage=payload["usage"])
    if "problem" in payload:
        return ShowResult(problem=payload["problem"])
    return ShowResult(map=AccessMap.from_dict(payload["map"]))


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()
