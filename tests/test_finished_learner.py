"""A learner who finished the course: in a checkout where every stub of exercises/ has been replaced by its
solution (and not committed, as a learner's work is not), the course's tests that name, grade or show a
stub still pass. They read the stub as the last commit holds it (`grader.commands.workspace.pristine`, through
tests/grading.py's `pristine_stub`, and the site's stub blocks), never the learner's working file."""

from __future__ import annotations

import pytest

from grader import catalogue
from tests import course_copy

#: The tests that could read a learner's file: the CLI's commands on the learner's exercise, the stubs'
#: gradings, `grade show`, the progress file, check-course, and the site's stub blocks.
READERS = ("tests/test_cli.py", "tests/test_show.py", "tests/test_progress.py", "tests/test_course_check.py")
#: Files whose other tests grade every solution or variant (the whole suite's work): only their stub tests.
STUB_TESTS = ("tests/test_course.py", "tests/test_site_learner.py")
#: Tests of READERS that map a variant of grader/exercises/ (named by its path, never the learner's file): the
#: whole suite runs them; here they would only repeat it (14 maps, 40 of the copy's 130 s, one a 15 s hang).
NOT_READERS = "not show_draws_the_mistake_each"
#: READERS but NOT_READERS, and the stub tests of STUB_TESTS, in one pytest process: a second process
#: started pytest, torch and Triton again (alone, the test took 61 s with two runs and takes 52 s with one).
SELECTED = f"{NOT_READERS} and (stub or not ({' or '.join(p.rpartition('/')[2] for p in STUB_TESTS)}))"


@pytest.mark.long
def test_a_learner_who_solved_every_exercise_leaves_the_course_tests_green(tmp_path):
    course = course_copy.checkout(tmp_path / "course")
    for exercise in catalogue.EXERCISES:
        (course / exercise.learner_file).write_bytes((course / exercise.solution_file).read_bytes())
    solved = course_copy.run(course, "-c", "import sys; from grader import catalogue; "
                             "sys.exit(any((catalogue.ROOT / e.learner_file).read_bytes() != "
                             "(catalogue.ROOT / e.solution_file).read_bytes() for e in catalogue.EXERCISES))")
    assert solved.returncode == 0, "the copy's stubs are not its solutions: " + solved.stderr[-2000:]

    tested = course_copy.pytest(course, *READERS, *STUB_TESTS, "-rA", "-k", SELECTED)
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-2000:]
    for exercise in catalogue.EXERCISES:  # every stub graded as committed: it fails with its sentence
        case = f"PASSED tests/test_course.py::test_stub_says_not_implemented[ex{exercise.number:02d}]"
        assert case in tested.stdout, tested.stdout[-4000:]
    for path in (*READERS, *STUB_TESTS):  # each file's tests ran, none was left out by SELECTED
        assert f"PASSED {path}::" in tested.stdout, f"no test of {path} ran: " + tested.stdout[-4000:]
