"""Exercise 4's occupancy: the grader's hand-computed cases, the solution and the stub agree."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest

from grader import catalogue
from grader.exercises.ex04_softmax_persistent import spec
from tests.grading import pristine_stub


def _load(path):
    module_spec = importlib.util.spec_from_file_location(f"ex04_{path.parent.name}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


EXERCISE = catalogue.get(4)
SOLUTION = _load(EXERCISE.solution_path)
STUB = _load(pristine_stub(EXERCISE, Path(tempfile.mkdtemp(prefix="ex04-stub-"))))  # the stub as committed


@pytest.mark.parametrize("case", spec.OCCUPANCY_CASES, ids=lambda c: c[0])
def test_hand_computed_case_is_the_tightest_limit(case):
    name, n_regs, shared_bytes, num_warps, limits, expected = case
    each = spec.occupancy(n_regs, shared_bytes, num_warps, **limits)
    assert min(each.values()) == expected, (name, each)


def test_each_limit_is_the_tightest_in_some_case():
    tightest = set()
    for _name, n_regs, shared_bytes, num_warps, limits, _expected in spec.OCCUPANCY_CASES:
        each = spec.occupancy(n_regs, shared_bytes, num_warps, **limits)
        tightest.add(min(each, key=each.get))
    assert tightest == {"registers", "shared memory", "threads"}


@pytest.mark.parametrize("case", spec.OCCUPANCY_CASES, ids=lambda c: c[0])
def test_solution_programs_per_sm(case):
    _name, n_regs, shared_bytes, num_warps, limits, expected = case
    assert SOLUTION.programs_per_sm(n_regs, shared_bytes, num_warps, **limits) == expected


@pytest.mark.parametrize("case", spec.GRID_CASES)
def test_solution_grid_size(case):
    n_rows, per_sm, num_sms, expected = case
    assert SOLUTION.grid_size(n_rows, per_sm, num_sms) == expected


def test_interpreter_stand_ins_agree_and_give_a_grid_of_eight():
    for module in (SOLUTION, STUB):
        assert module.INTERPRETER_KERNEL == spec.INTERPRETER_KERNEL
        assert module.INTERPRETER_GPU == spec.INTERPRETER_GPU
    gpu = dict(spec.INTERPRETER_GPU)
    num_sms = gpu.pop("num_sms")
    k = spec.INTERPRETER_KERNEL
    per_sm = SOLUTION.programs_per_sm(k["n_regs"], k["shared_bytes"], k["num_warps"], **gpu)
    assert SOLUTION.grid_size(1000, per_sm, num_sms) == 8
    # The grid check's row counts: fewer rows than programs, one round, several rounds.
    assert spec.GRID_ROWS["few_rows"]["interpreter"] < 8 <= spec.GRID_ROWS["many_rows"]["interpreter"] // 4


def test_correctness_checks_run_the_row_loop_in_the_interpreter():
    assert min(spec.ROWS["interpreter"].values()) > 8
    assert spec.STRIDED["interpreter"][0] > 8 and spec.SPECIAL["interpreter"][0] > 8


def test_stub_occupancy_functions_say_not_implemented():
    with pytest.raises(NotImplementedError, match="exercise 4"):
        STUB.programs_per_sm(32, 0, 4)
    with pytest.raises(NotImplementedError, match="exercise 4"):
        STUB.grid_size(10, 2, 4)
