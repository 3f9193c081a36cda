"""The course holds together: every solution passes, every stub says "not implemented yet",
every known-wrong variant is rejected with the message it was written to provoke, and no file
exists that no exercise folder names."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from rich.console import Console

from grader import catalogue
from grader.commands import report
from tests.grading import ROOT, failure_messages, grade, pristine_stub, variant_metadata, wrong_variants

READY = [e for e in catalogue.EXERCISES if e.spec_file.is_file() and e.solution_path.is_file()]


@pytest.mark.parametrize("exercise", READY, ids=lambda e: f"ex{e.number:02d}")
def test_solution_passes(exercise):
    run = grade(exercise.number, exercise.solution_path)
    assert run.mode == "interpreter"
    assert run.passed, f"solution {exercise.solution_file} failed: {failure_messages(run)}"
    perf = [c for c in run.checks if c.name == "performance"]
    if perf:  # never reported as passed without a GPU
        assert perf[0].skipped and not perf[0].passed
        assert "not measured (no GPU)" in perf[0].message
    traffic = run.extra("traffic")
    if exercise.expected_traffic is not None:  # the manifest's [expected_traffic], worked out by hand
        assert traffic is not None, "the traffic check recorded nothing"
        counted = {name: (t["loaded"], t["stored"]) for name, t in traffic["tensors"].items()}
        assert counted == exercise.expected_traffic, f"the bytes counted differ from {exercise.manifest}"
        # The grading page's table (docs/assets/traffic-table.txt) must say what the grader counts.
        from docs.scripts.traffic_table import row

        table = (ROOT / "docs" / "assets" / "traffic-table.txt").read_text()
        assert row(exercise.number, exercise.slug, traffic) in table, (
            "docs/assets/traffic-table.txt is out of date: run python docs/scripts/traffic_table.py")


@pytest.mark.parametrize("exercise", READY, ids=lambda e: f"ex{e.number:02d}")
def test_stub_says_not_implemented(exercise, tmp_path):
    run = grade(exercise.number, pristine_stub(exercise, tmp_path))
    assert not run.passed
    messages = failure_messages(run)
    assert messages, "the stub produced no failing check"
    assert messages[0].startswith("not implemented yet"), messages[0]
    assert "Traceback" not in messages[0]


VARIANTS = wrong_variants()


@pytest.mark.parametrize("number,path", VARIANTS, ids=[f"ex{n:02d}-{p.stem}" for n, p in VARIANTS])
def test_wrong_variant_rejected_with_its_message(number, path):
    meta = variant_metadata(path)
    assert meta["EXPECTED"], f"{path} must say which message the grader gives (EXPECTED = ...)"
    run = grade(number, path, select=meta["SELECT"], timeout=meta["TIMEOUT"])
    assert not run.passed, f"{path.name} was not rejected"
    messages = failure_messages(run)
    assert any(meta["EXPECTED"] in m for m in messages), (
        f"{path.name}: expected a failure containing {meta['EXPECTED']!r}, got {messages[:3]}"
    )
    assert not any("Traceback" in m for m in messages)
    lines = report_lines(run, number)
    assert fits(lines), "\n".join(lines)


def report_lines(run, number: int) -> list[str]:
    """The text report as a learner's 80-column terminal shows it."""
    console = Console(file=StringIO(), width=80, force_terminal=False, color_system=None)
    report.render(run, catalogue.get(number), console)
    return console.file.getvalue().rstrip("\n").split("\n")


def fits(lines: list[str]) -> bool:
    """At most 40 lines at 80 columns; only the lines printed whole for copying (the file's path,
    the replay and `grade show` commands) may run past 80 and then count as the terminal wraps them."""
    copied = [line for line in lines if line.startswith(("Replay these", "See what your kernel", "/"))]
    from rich.cells import cell_len  # columns on screen: x̂ is two code points and one column

    rows = sum(-(-max(cell_len(line), 1) // 80) for line in lines)
    return rows <= 40 and all(cell_len(line) <= 80 for line in lines if line not in copied)


def test_a_diagnosis_repeated_in_every_case_is_one_message():
    """`other=0.0` on exercise 3, every check run: the same diagnosis in many cases is shown once with
    a count, the whole report fits 40 lines of 80 columns, and the header does not wrap."""
    run = grade(3, catalogue.get(3).wrong_dir / "no_other_inf.py")
    failed = [c for c in run.checks if c.failed]
    assert len(failed) >= 10
    lines = report_lines(run, 3)
    text = "\n".join(lines)
    assert fits(lines), text
    assert text.count("masked lanes were loaded as 0") == 1, text
    assert "the same in" in text and "more cases" in text and "see --json" in text
    assert lines[0].startswith("Exercise 3 ") and lines[2].startswith("Triton interpreter (no GPU) · seed"), text
    assert "This is not a special case" in json.dumps(report.to_json(run)), "the fully masked row names the cause"


def test_every_exercise_file_is_in_the_catalogue():
    named = {e.learner_file for e in catalogue.EXERCISES} | {e.solution_file for e in catalogue.EXERCISES}
    for folder in ("exercises", "solutions"):
        for path in (ROOT / folder).glob("*.py"):
            if path.name == "__init__.py":
                continue
            assert f"{folder}/{path.name}" in named, f"{folder}/{path.name} belongs to no folder of grader/exercises/"


def test_catalogue_numbers_are_consecutive_and_files_mirror():
    numbers = [e.number for e in catalogue.EXERCISES]
    assert numbers == list(range(1, len(numbers) + 1))
    for e in catalogue.EXERCISES:
        assert e.learner_file.removeprefix("exercises/") == e.solution_file.removeprefix("solutions/")
