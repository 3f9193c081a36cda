"""Correct code passes: every learner-style file in grader/exercises/exNN_slug/natural/ is graded, and must pass.

Each file is a complete, correct solution written the way a learner might write it (the
tutorial's style, another block size, another loop, exp2, running statistics as vectors...),
different from the reference solution; its docstring says how. A file may declare ``SELECT``
(a pytest -k expression) to keep the course's tests fast; at least one file per exercise runs
the whole spec (every check, every dtype the exercise grades), which this test also enforces.
"""

from __future__ import annotations

import pytest

from tests.grading import failure_messages, grade, natural_files, variant_metadata

FILES = natural_files()


@pytest.mark.parametrize("number,path", FILES, ids=[f"ex{n:02d}-{p.stem}" for n, p in FILES])
def test_natural_file_passes(number, path):
    meta = variant_metadata(path)
    run = grade(number, path, select=meta["SELECT"], timeout=meta["TIMEOUT"])
    assert run.mode == "interpreter"
    ran = [c for c in run.checks if not c.skipped]
    assert ran, f"{path.name}: no check ran (SELECT = {meta['SELECT']!r} selects nothing?)"
    assert run.passed, f"{path.name} was failed: {failure_messages(run)[:3]}"


def test_every_file_says_how_it_differs_and_each_exercise_runs_its_whole_spec():
    import ast

    whole = set()
    for number, path in FILES:
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        assert docstring and "solution" in docstring, f"{path}: the docstring must say how it differs from the solution"
        if variant_metadata(path)["SELECT"] is None:
            whole.add(number)
    assert whole == {number for number, _ in FILES}, "every exercise needs one natural file without SELECT"
    assert {1, 2, 3, 4, 5, 7} <= {number for number, _ in FILES}
    for number in {n for n, _ in FILES}:
        assert sum(n == number for n, _ in FILES) >= 3, f"exercise {number}: fewer than three natural files"
