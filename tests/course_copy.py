"""A copy of the course that is a git checkout of its own, for the tests that change a course and run its
tools and tests there: the throwaway exercise (tests/test_new_exercise.py) and the learner who solved every
exercise (tests/test_finished_learner.py).

The copy holds every file git sees in this checkout (tracked or not ignored) as the working tree has it,
committed once, so that what the course reads "as committed" (`grader.commands.workspace.pristine`, the site's stub
blocks) reads the copy's own history. Commands run with the copy as their folder and without this
checkout's PYTHONPATH: `python -m` imports the copy's grader, tools and tests, never this checkout's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from grader import catalogue

ROOT = catalogue.ROOT
#: git's identity for the copy's commits (a copy has no user configuration of its own to rely on).
IDENTITY = ("-c", "user.name=course copy", "-c", "user.email=course-copy@example.invalid")


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", *IDENTITY, *args], cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"git {' '.join(args)} in {folder}: {done.stderr}"
    return done.stdout


def checkout(target: Path) -> Path:
    """The course as this checkout's working tree holds it, copied into ``target`` and committed there."""
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for relative in filter(None, listed):
        source = ROOT / relative
        if source.is_file():  # a tracked file deleted in the working tree is left out, as git add -A would
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)
    _git(target, "init", "-q")
    commit(target, "the course")
    return target


def commit(course: Path, message: str) -> None:
    _git(course, "add", "-A")
    _git(course, "commit", "-q", "--allow-empty", "-m", message)


def run(course: Path, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python ARGS`` in the copy, importing the copy's grader, tools and tests (never this checkout's)."""
    env = {k: v for k, v in (env or os.environ).items() if k not in ("PYTHONPATH", "PYTEST_XDIST_WORKER")}
    return subprocess.run([sys.executable, *args], cwd=course, capture_output=True, text=True, timeout=timeout,
                          env=env)


def pytest(course: Path, *args: str, timeout: float = 1500) -> subprocess.CompletedProcess:
    """The copy's own tests, in one process (the project's pytest options write no cache beside them)."""
    return run(course, "-m", "pytest", "-q", "-n", "0", *args, timeout=timeout)
