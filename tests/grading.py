"""Helpers for the course's own tests: grade a file the way `grade exercise N --json` does."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from grader import catalogue
from grader.commands import isolation

ROOT = catalogue.ROOT
SEED = int(os.environ.get("COURSE_TEST_SEED", "20261130"))


def grade(number: int, path: Path | str, *, select: str | None = None, timeout: float | None = None):
    return isolation.run_checks(catalogue.get(number), path, seed=SEED, interpreter=True,
                                check_timeout=timeout, select=select)


def wrong_variants() -> list[tuple[int, Path]]:
    """Every known-wrong learner file (each exercise folder's wrong/), with its exercise number."""
    return [(exercise.number, path) for exercise in catalogue.EXERCISES for path in sorted(exercise.wrong_dir.glob("*.py"))]


def natural_files() -> list[tuple[int, Path]]:
    """Every correct learner file (each exercise folder's natural/) that differs from the solution."""
    return [(exercise.number, path) for exercise in catalogue.EXERCISES
            for path in sorted(exercise.natural_dir.glob("*.py"))]


def variant_metadata(path: Path) -> dict:
    """EXPECTED (the grader's message must contain it), SELECT (-k expression), TIMEOUT."""
    text = path.read_text()
    spec = importlib.util.spec_from_file_location("variant_meta", path)
    namespace: dict = {}
    # Read the module-level constants without importing Triton kernels: exec only the assignments.
    import ast

    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            names = [t.id for t in node.targets]
            if any(n in {"EXPECTED", "SELECT", "TIMEOUT"} for n in names):
                exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    del spec
    return {k: namespace.get(k) for k in ("EXPECTED", "SELECT", "TIMEOUT")}


def failure_messages(run) -> list[str]:
    messages = [c.message for c in run.checks if not c.passed and c.kind != "not_run" and not c.skipped]
    if run.fatal:
        messages.append(run.fatal)
    return messages


def pristine_stub(exercise, folder: Path) -> Path:
    """The exercise's stub as committed (git), written into ``folder``: the course's tests never read
    the learner's working file, which a learner who solved the exercise has changed."""
    from grader.commands import workspace

    target = Path(folder) / Path(exercise.learner_file).name
    target.write_bytes(workspace.pristine(exercise.learner_path))
    return target
