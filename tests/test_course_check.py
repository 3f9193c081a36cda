"""`grade check-course`: passes on the course as it is, and on a copy with one piece taken away
fails with a sentence naming that piece and the one place to edit (for a manifest: the file and
the field)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import catalogue
from grader.commands import cli, course_check
from tools import new_exercise

ROOT = catalogue.ROOT
#: What check-course reads; a copy of these is a course as far as it can tell.
COURSE_PARTS = ("exercises", "solutions", "grader", "docs/exercises", "docs/chapters", "docs/assets/traffic-table.txt",
                "tools/new_exercise.py", "tools/exercise_template")


def copy_course(target: Path) -> Path:
    for part in COURSE_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part, ignore=shutil.ignore_patterns("__pycache__", "wrong", "natural",
                                                                                 "hostile"))
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
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


def _rename_function(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(f"def {old}(", f"def {new}("))


EX3 = catalogue.get(3)
MANIFEST3 = "grader/exercises/ex03_softmax/exercise.toml"
#: The manifest tools/new_exercise.py writes, before the exercise's own text replaces it.
TEMPLATE_MANIFEST = catalogue.tomllib.loads(new_exercise.rendered(
    EX3.number, EX3.slug, title=EX3.title, function=EX3.function, nav_title=EX3.nav_title)[MANIFEST3])



def _strip_docstring(path: Path) -> None:
    """The module without its docstring (the solution's commentary), everything else as it was."""
    import ast

    source = path.read_text()
    end = ast.parse(source).body[0].end_lineno
    path.write_text("\n".join(source.splitlines()[end:]) + "\n")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))


def _drop_lines(path: Path, start: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(start)]
    assert len(kept) == len(lines) - 1, f"no line of {path} starts with {start!r}"
    path.write_text("".join(kept))


# (what is taken away, how, the words the report must contain)
BREAKAGES = {
    "stub": (lambda root: (root / EX3.learner_file).unlink(), ["stub exercises/ex03_softmax.py is missing"]),
    "stub-function": (lambda root: _rename_function(root / EX3.learner_file, "softmax", "soft_max"),
                      ["stub exercises/ex03_softmax.py does not define `softmax`", f"`function` of {MANIFEST3}"]),
    "solution": (lambda root: (root / EX3.solution_file).unlink(), ["solution solutions/ex03_softmax.py is missing"]),
    "solution-commentary": (lambda root: _strip_docstring(root / EX3.solution_file),
                            ["solution solutions/ex03_softmax.py has no module docstring", "grade solution 3"]),
    "spec": (lambda root: (root / "grader/exercises/ex03_softmax/spec.py").unlink(),
             ["spec grader/exercises/ex03_softmax/spec.py is missing"]),
    "byte-model": (lambda root: _rename_function(root / "grader/exercises/ex03_softmax/spec.py", "minimum_bytes", "bytes"),
                   ["spec grader/exercises/ex03_softmax/spec.py does not define `minimum_bytes`", "`byte_model`"]),
    "page": (lambda root: (root / "docs/exercises/ex03_softmax.md").unlink(),
             ["docs page docs/exercises/ex03_softmax.md is missing"]),
    "chapter": (lambda root: (root / "docs/chapters/04_fused_softmax.md").unlink(),
                [f"`chapters` in {MANIFEST3} names docs/chapters/04_fused_softmax.md, which is missing"]),
    "measurement": (lambda root: (root / "docs/measurements/h200-ex03-softmax.json").unlink(),
                    [f"`floor.measurement` in {MANIFEST3}", "h200-ex03-softmax.json, which is missing"]),
    "measurement-key": (lambda root: (root / "docs/measurements/h200-ex03-softmax.json").write_text('{"rows": []}'),
                        ["h200-ex03-softmax.json", "no figures under the key 'rows'"]),
    "manifest": (lambda root: (root / MANIFEST3).unlink(),
                 [f"{MANIFEST3} is missing"]),
    "manifest-field": (lambda root: _edit(root / MANIFEST3, 'function = "softmax"\n', ""),
                       [f"{MANIFEST3}: `function` is missing"]),
    "manifest-type": (lambda root: _edit(root / MANIFEST3, "fraction = 0.8", 'fraction = "0.8"'),
                      [f"{MANIFEST3}: `floor.fraction` must be an integer or a number, not a string"]),
    "bench": (lambda root: _edit(root / MANIFEST3, 'workload = "softmax"', 'workload = "softmx"'),
              [f"`bench.workload` in {MANIFEST3} is 'softmx'", "`WORKLOADS` of grader/exercises/ex03_softmax/bench.py"]),
    "bench-file": (lambda root: (root / "grader/exercises/ex03_softmax/bench.py").unlink(),
                   [f"`bench.workload` in {MANIFEST3} is 'softmax'", "ex03_softmax/bench.py (it has none)"]),
    "bench-missing": (lambda root: _edit(root / MANIFEST3, "[bench]", "[benchmark]"),
                      [f"{MANIFEST3}: `benchmark` is not a field the catalogue knows"]),
    "chapters-empty": (lambda root: _edit(root / MANIFEST3, 'chapters = ["chapters/04_fused_softmax.md"]', "chapters = []"),
                       [f"`chapters` in {MANIFEST3} is empty"]),
    "template-field": (lambda root: _edit(root / MANIFEST3, f"you_learn = {EX3.you_learn!r}".replace("'", '"'),
                                          f'you_learn = "{TEMPLATE_MANIFEST["you_learn"]}"'),
                       [f"`you_learn` in {MANIFEST3} is still the template's text"]),
    "template-sentence": (lambda root: _edit(root / "docs/exercises/ex03_softmax.md", "## What you will write\n",
                                             "## What you will write\n\nA Triton kernel and its launcher: `softmax(x)`.\n"),
                          ["docs/exercises/ex03_softmax.md still holds the template's text"]),
    "traffic-row": (lambda root: _drop_lines(root / "docs/assets/traffic-table.txt", "| 3 · softmax |"),
                    ["traffic-table.txt has no row for exercise 3", "traffic_table.py"]),
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
    (course / "docs/exercises/ex03_softmax.md").unlink()
    done = subprocess.run([sys.executable, "-m", "grader.commands.cli", "check-course"], cwd=course, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == cli.EXIT_FAILED, done.stdout + done.stderr
    assert "1 thing missing" in done.stdout
    assert "the docs page docs/exercises/ex03_softmax.md is missing" in done.stdout


def test_a_broken_manifest_stops_every_other_command_with_its_sentence(course):
    _edit(course / MANIFEST3, "number = 3", "number = 33")
    done = subprocess.run([sys.executable, "-m", "grader.commands.cli", "list"], cwd=course, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == cli.EXIT_FAILED, done.stdout + done.stderr
    assert f"{MANIFEST3}: `number` is 33, but the folder ex03_softmax says 3" in done.stderr
