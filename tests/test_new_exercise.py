"""Adding an exercise is one grader folder, one stub, one solution and one docs page: in a copy of the
course, `python -m tools.new_exercise` writes them from the template and no other file is edited; the
solution passes `grade exercise N` in Triton's interpreter; `grade check-course` refuses the exercise
while the template's text is in place, and passes once it is the exercise's own (and the traffic table
has its row); then `grade check-course --grade N` proves its stub fails and its solution passes, and the
course's tests that read the catalogue pass with the new exercise among the others."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from grader import catalogue
from tests import course_copy
from tests.course_copy import run

ROOT = catalogue.ROOT
#: The course's tests that find every exercise through the catalogue (none names an exercise it needs):
#: a new exercise must pass them as the others do.
CATALOGUE_TESTS = ("tests/test_course.py", "tests/test_catalogue.py", "tests/test_natural.py", "tests/test_bench.py",
                   "tests/test_course_check.py")


def digests(root: Path) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in root.rglob("*") if path.is_file() and not {"__pycache__", ".git"} & set(path.parts)}


@pytest.mark.long
def test_a_new_exercise_is_one_folder_a_stub_a_solution_and_a_page(tmp_path):
    course = course_copy.checkout(tmp_path / "course")
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

    course_copy.commit(course, f"exercise {number}")  # its stub as committed is what the tests grade
    graded = run(course, "-m", "grader.commands.cli", "check-course", "--grade", str(number), env=env, timeout=900)
    said = " ".join(graded.stdout.split())
    assert graded.returncode == 0 and "every stub fails and every solution passes (1 graded)" in said, \
        graded.stdout + graded.stderr[-2000:]
    # The catalogue's tests, with the new exercise's cases and the checks of the whole catalogue; the other
    # exercises' cases are their own business (and the suite's).
    others = " or ".join(f"ex{e.number:02d}" for e in catalogue.EXERCISES)
    tested = course_copy.pytest(course, *CATALOGUE_TESTS, "-rA", "-k", f"ex{number:02d} or not ({others})")
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-2000:]
    for case in ("test_solution_passes", "test_stub_says_not_implemented"):
        assert f"PASSED tests/test_course.py::{case}[ex{number:02d}]" in tested.stdout, tested.stdout[-4000:]


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
