"""`grade check-course`: passes on the course as it is, and on a copy with one piece taken away
fails with a sentence naming that piece and the one place to edit."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import catalogue, cli, course_check

ROOT = catalogue.ROOT
#: What check-course reads; a copy of these is a course as far as it can tell.
COURSE_PARTS = ("mkdocs.yml", "README.md", "exercises", "solutions", "grader", "docs/exercises")


def copy_course(target: Path) -> Path:
    for part in COURSE_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / part)
    measurements = target / "docs" / "measurements"
    measurements.mkdir(parents=True)
    for exercise in catalogue.EXERCISES:
        if exercise.floor_measurement:
            shutil.copy2(ROOT / exercise.floor_measurement[0], measurements)
    return target


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return copy_course(tmp_path_factory.mktemp("course"))


@pytest.fixture
def course(pristine, tmp_path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "course"))


def test_the_course_is_complete(capsys):
    assert course_check.problems() == []
    assert cli.main(["check-course"]) == cli.EXIT_PASSED
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "check-course: OK" in out


def test_a_copy_is_complete_too(pristine):
    assert course_check.problems(pristine) == []


def _drop_line(path: Path, pattern: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not re.search(pattern, line)]
    assert len(kept) == len(lines) - 1, f"{pattern!r} should match one line of {path}"
    path.write_text("".join(kept))


def _rename_function(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(f"def {old}(", f"def {new}("))


EX3 = catalogue.get(3)

# (what is taken away, how, the words the report must contain)
BREAKAGES = {
    "stub": (lambda root: (root / EX3.learner_file).unlink(), ["stub exercises/ex03_softmax.py is missing"]),
    "stub-function": (lambda root: _rename_function(root / EX3.learner_file, "softmax", "soft_max"),
                      ["stub exercises/ex03_softmax.py does not define `softmax`"]),
    "solution": (lambda root: (root / EX3.solution_file).unlink(), ["solution solutions/ex03_softmax.py is missing"]),
    "spec": (lambda root: (root / "grader/exercises/ex03_softmax/spec.py").unlink(),
             ["spec grader/exercises/ex03_softmax/spec.py is missing"]),
    "page": (lambda root: (root / "docs/exercises/ex03_softmax.md").unlink(),
             ["docs page docs/exercises/ex03_softmax.md is missing"]),
    "nav": (lambda root: _drop_line(root / "mkdocs.yml", r"exercises/ex03_softmax\.md"),
            ["mkdocs.yml's nav has no entry for exercises/ex03_softmax.md"]),
    "readme-row": (lambda root: _drop_line(root / "README.md", r"^\| 3 \|"),
                   ["README.md's exercise table has no row for exercise 3"]),
    "index-row": (lambda root: _drop_line(root / "docs/exercises/index.md", r"^\| 3 \|"),
                  ["docs/exercises/index.md's table has no row for exercise 3"]),
    "measurement": (lambda root: (root / "docs/measurements/h200-ex03-softmax.json").unlink(),
                    ["exercise 3's `floor_measurement`", "h200-ex03-softmax.json, which is missing"]),
    "measurement-key": (lambda root: (root / "docs/measurements/h200-ex03-softmax.json").write_text('{"rows": []}'),
                        ["h200-ex03-softmax.json", "no figures under the key 'rows'"]),
    "bench": (lambda root: _drop_line(root / "grader/bench_sweep.py", r"^    6: \"exercise 6 is about"),
              ["grader/bench_sweep.py has no sweep for exercise 6"]),
    "stray-file": (lambda root: (root / "exercises/ex11_extra.py").write_text("def extra(): pass\n"),
                   ["exercises/ex11_extra.py belongs to no exercise"]),
}


@pytest.mark.parametrize("piece", list(BREAKAGES))
def test_a_missing_piece_is_named(course, piece):
    remove, words = BREAKAGES[piece]
    remove(course)
    found = course_check.problems(course)
    assert len(found) == 1, found
    for word in words:
        assert word in found[0]


def test_the_command_on_a_broken_copy_exits_1_and_names_the_piece(course):
    _drop_line(course / "mkdocs.yml", r"exercises/ex03_softmax\.md")
    done = subprocess.run([sys.executable, "-m", "grader.cli", "check-course"], cwd=course, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == cli.EXIT_FAILED, done.stdout + done.stderr
    assert "1 thing missing" in done.stdout
    assert "mkdocs.yml's nav has no entry for exercises/ex03_softmax.md" in done.stdout
