"""Adding an exercise is one grader folder, one stub, one solution and one docs page: in a copy of the
course, `python -m tools.new_exercise` writes them from the template and no other file is edited; the
solution passes `grade exercise N` in Triton's interpreter; `grade check-course` refuses the exercise
while the template's text is in place, and passes once it is the exercise's own (and the traffic table
has its row)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import catalogue

ROOT = catalogue.ROOT
#: What a course needs for check-course and grading (learner files of the course's own tests left out).
PARTS = ("grader", "exercises", "solutions", "docs/exercises", "docs/chapters", "docs/assets/traffic-table.txt",
         "tools/__init__.py", "tools/new_exercise.py", "tools/exercise_template")


def copy_course(target: Path) -> Path:
    for part in PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part,
                            ignore=shutil.ignore_patterns("__pycache__", "wrong", "natural", "hostile"))
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / part)
    (target / "docs" / "measurements").mkdir(parents=True)
    for exercise in catalogue.EXERCISES:
        if exercise.floor_measurement:
            shutil.copy2(ROOT / exercise.floor_measurement[0], target / exercise.floor_measurement[0])
    return target


def digests(root: Path) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in root.rglob("*") if path.is_file() and "__pycache__" not in path.parts}


def run(course: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` in the copy, importing the copy's grader and tools (never this checkout's)."""
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, *args], cwd=course, capture_output=True, text=True, timeout=300,
                          env=env)


def test_a_new_exercise_is_one_folder_a_stub_a_solution_and_a_page(tmp_path):
    course = copy_course(tmp_path / "course")
    before = digests(course)
    number = len(catalogue.EXERCISES) + 1
    stem = f"ex{number:02d}_copy"
    made = run(course, "-m", "tools.new_exercise", "copy", "--title", "Copy: one read, one write",
               "--function", "copy")
    assert made.returncode == 0, made.stderr

    after = digests(course)
    assert {name for name in before if before[name] != after.get(name)} == set(), "an existing file was edited"
    assert sorted(set(after) - set(before)) == sorted([
        f"grader/exercises/{stem}/__init__.py", f"grader/exercises/{stem}/exercise.toml",
        f"grader/exercises/{stem}/spec.py", f"exercises/{stem}.py", f"solutions/{stem}.py",
        f"docs/exercises/{stem}.md"])

    env = {**os.environ, "GRADE_STATE_DIR": str(tmp_path / "state"), "TRITON_INTERPRET": "1"}
    graded = run(course, "-m", "grader.commands.cli", "exercise", str(number), "--from", f"solutions/{stem}.py", "--json",
                 env=env)
    result = json.loads(graded.stdout)
    assert graded.returncode == 0 and result["passed"], graded.stdout[-2000:] + graded.stderr[-2000:]
    names = {check["name"] for check in result["checks"]}
    assert {"matches_reference[n4093-fp32]", "traffic"} <= names
    assert any(c["name"] == "performance" and "not measured (no GPU)" in c["message"] for c in result["checks"])

    refused = run(course, "-m", "grader.commands.cli", "check-course")
    said = " ".join(refused.stdout.split())
    assert refused.returncode == 1, refused.stdout + refused.stderr
    for piece in ("`chapters` in", "`you_learn` in", "`hints` in", "`bench.unavailable` in", f"exercises/{stem}.py",
                  f"docs/exercises/{stem}.md", f"grader/exercises/{stem}/spec.py", "traffic-table.txt has no row"):
        assert piece in said, f"check-course did not name {piece}: {said}"

    make_it_its_own(course, stem, number, result["traffic"])
    checked = run(course, "-m", "grader.commands.cli", "check-course")
    assert checked.returncode == 0 and f"check-course: OK, {number} exercises" in checked.stdout, \
        checked.stdout + checked.stderr


def make_it_its_own(course: Path, stem: str, number: int, traffic: dict) -> None:
    """What a maintainer does after the tool: the manifest's text, the chapters, the bench's reason, every
    sentence the template wrote, and the traffic table's row (from the solution's own grading)."""
    from docs.scripts.traffic_table import row
    from grader.commands import course_check
    from tools import new_exercise

    manifest = course / f"grader/exercises/{stem}/exercise.toml"
    text = manifest.read_text()
    text = text.replace('chapters = []', f'chapters = ["{catalogue.EXERCISES[0].chapters[0]}"]')
    lines = text.splitlines()
    start = lines.index("hints = [")
    lines[start:lines.index("]", start) + 1] = ['hints = ["Copy\'s own hint: one load, one store, one mask."]']
    text = "\n".join(lines) + "\n"
    text = text.replace('you_learn = "what the exercise teaches, in one phrase"', 'you_learn = "a copy\'s own lesson"')
    text = text.replace('its sizes and workload are not chosen yet', "a copy's bench would be exercise 1's")
    manifest.write_text(text)
    exercise = catalogue.read_manifest(manifest, course)
    template = new_exercise.rendered(exercise.number, exercise.slug, title=exercise.title,
                                     function=exercise.function, nav_title=exercise.nav_title)
    for relative, sentences in course_check.template_text_left(course, exercise, template).items():
        path = course / relative
        source = path.read_text()
        for sentence in sentences:
            source = source.replace(sentence, sentence.replace(" ", " copy's own ", 1))
        path.write_text(source)
    table = course / "docs/assets/traffic-table.txt"
    table.write_text(table.read_text().rstrip("\n") + "\n" + row(number, exercise.slug, traffic) + "\n")


def test_the_tool_refuses_a_bad_name_and_an_existing_exercise(tmp_path, capsys):
    from tools import new_exercise

    assert new_exercise.main(["Bad-Name", "--title", "T", "--function", "f", "--root", str(ROOT)]) == 2
    assert "the slug must be lower-case" in capsys.readouterr().err
    assert new_exercise.main(["softmax", "--number", "3", "--title", "T", "--function", "f", "--root", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert "exercises/ex03_softmax.py" in err and "already exist" in err
    with pytest.raises(ValueError, match="must be a Python name"):
        new_exercise.create(tmp_path, "ok", title="T", function="not a name")
