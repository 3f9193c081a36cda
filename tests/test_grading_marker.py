"""The `grading` marker's rule (tests/grading_marker.py): a test that grades is marked without anyone
writing the marker, through the helpers and fixtures of its module; a test that only computes is not."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests import grading_marker
from tests.grading_marker import grading_functions

MODULE = textwrap.dedent('''
    import subprocess, sys
    import pytest
    from grader import catalogue
    from grader.commands import cli, isolation as iso
    from tests.grading import grade
    import site_helpers as helpers

    def _run(path):
        return iso.run_checks(catalogue.get(1), path, seed=1)

    def _git(*args):
        return subprocess.run(["git", *args])

    @pytest.fixture
    def site(tmp_path):
        return helpers.build_site(tmp_path)

    def test_grades_directly(tmp_path):
        assert grade(1, tmp_path / "x.py")

    def test_grades_through_a_helper(tmp_path):
        assert _run(tmp_path)

    def test_asks_for_the_site(site):
        assert site

    def test_starts_python():
        subprocess.run([sys.executable, "-c", "pass"])

    def test_grades_through_the_cli():
        cli.main(["exercise", "1"])

    @pytest.mark.parametrize("argv", [["show", "1", "--size", "0"], ["list"]])
    def test_parametrized_command(argv):
        cli.main(argv)

    @pytest.mark.parametrize("exercise", catalogue.EXERCISES)
    def test_reads_the_catalogue(exercise):
        assert exercise.number

    def test_runs_git():
        _git("status")

    def test_lists_exercises():
        cli.main(["list"])
''')


def test_the_rule_marks_what_grades_and_only_that():
    assert grading_functions(MODULE) == {"_run", "site", "test_grades_directly", "test_grades_through_a_helper",
                                         "test_asks_for_the_site", "test_starts_python", "test_grades_through_the_cli",
                                         "test_parametrized_command"}


def test_the_course_tests_that_grade_are_marked():
    """A natural file graded in full, every solution, and a read-only check that only reads metadata."""
    folder = Path(grading_marker.__file__).parent
    natural = grading_functions((folder / "test_natural.py").read_text())
    course = grading_functions((folder / "test_course.py").read_text())
    assert "test_natural_file_passes" in natural
    assert "test_every_file_says_how_it_differs_and_each_exercise_runs_its_whole_spec" not in natural
    assert {"test_solution_passes", "test_stub_says_not_implemented", "test_wrong_variant_rejected_with_its_message"} <= course, sorted(course)


def test_conftests_site_fixtures_grade_and_mark_the_tests_that_ask_for_them():
    """The site build and the browser live in conftest.py, outside the modules the rule reads: its
    GRADING_FIXTURES must be fixtures the rule calls grading, and a test asking for one is marked."""
    import sys
    from types import SimpleNamespace

    import conftest

    folder = Path(grading_marker.__file__).parent
    assert conftest.GRADING_FIXTURES == {"built_site", "browser"}
    assert conftest.GRADING_FIXTURES <= grading_functions((folder / "conftest.py").read_text())
    module = sys.modules[__name__]  # a module whose own functions do not grade
    for fixtures, grades in ((["tmp_path", "browser"], True), (["built_site"], True), (["tmp_path"], False)):
        item = SimpleNamespace(module=module, originalname="test_reads_a_page", fixturenames=fixtures)
        assert conftest._grades(item) is grades, fixtures
