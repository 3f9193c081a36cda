"""`checks.run_case(..., inplace=...)` and `checks.peak_memory`, on small Triton kernels in the
interpreter: an input the function must overwrite is checked element by element, its guards still
guard, other inputs stay read-only, and the memory a call allocates is measured."""

from __future__ import annotations

import os

import pytest
import torch
import triton
import triton.language as tl

from grader.judge import checks
from grader.wire.failures import GradeFailure

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="CPU tensors through Triton's interpreter (tests/conftest.py sets it without a GPU)")


@triton.jit
def _double_in_place(x_ptr, n, y_ptr, stop, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2.0, mask=offs < stop)
    tl.store(y_ptr, tl.sum(tl.where(offs < n, x, 0.0), axis=0), mask=tl.program_id(0) == 0)


def _doubler(stop_short: int = 0, overrun: int = 0, write_other: bool = False):
    """x *= 2 in place, returning sum(x): ``stop_short`` elements left unwritten at the end, ``overrun``
    elements written past it, or (``write_other``) the second input written too."""
    def fn(x: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        y = torch.empty((), dtype=torch.float32, device=x.device)
        _double_in_place[(1,)](x, n, y, n - stop_short + overrun, BLOCK=triton.next_power_of_2(n + overrun))
        if write_other:
            _double_in_place[(1,)](other, other.numel(), y, other.numel(), BLOCK=triton.next_power_of_2(other.numel()))
        return y
    return fn


def _inputs():
    generator = torch.Generator().manual_seed(0)
    return checks.randn((37,), torch.float32, generator, "cpu"), checks.randn((5,), torch.float32, generator, "cpu")


def _run(fn, x, other):
    expected_sum = x.double().sum().reshape(())
    return checks.run_case(fn, {"x": x, "other": other}, expected_sum, dtype=torch.float32,
                           inplace={"x": 2.0 * x.double()})


def test_an_input_overwritten_as_asked_passes_and_is_reported():
    x, other = _inputs()
    report = _run(_doubler(), x, other)
    assert torch.equal(report.inputs["x"], 2 * x)
    assert torch.equal(report.inputs["other"], other)


def test_elements_left_unwritten_are_counted():
    x, other = _inputs()
    with pytest.raises(GradeFailure, match=r"left 3 of 37 elements of `x` unchanged: x\[34\], x\[35\], x\[36\]"):
        _run(_doubler(stop_short=3), x, other)


def test_an_input_not_written_at_all_is_said_plainly():
    x, other = _inputs()
    with pytest.raises(GradeFailure, match="`x` is exactly as it was handed over"):
        _run(_doubler(stop_short=37), x, other)


def test_writes_past_an_in_place_input_are_still_caught():
    x, other = _inputs()
    with pytest.raises(GradeFailure, match=r"wrote 4 elements past the end of `x`: only the elements of `x`"):
        _run(_doubler(overrun=4), x, other)


def test_other_inputs_stay_read_only():
    x, other = _inputs()
    with pytest.raises(GradeFailure, match="changed 5 elements of the input `other`: inputs are read-only"):
        _run(_doubler(write_other=True), x, other)


def test_a_wrong_value_in_place_is_a_mismatch_named_after_the_input():
    x, other = _inputs()
    with pytest.raises(GradeFailure, match="elements of `x` differ from the float64 reference"):
        checks.run_case(_doubler(), {"x": x, "other": other}, x.double().sum().reshape(()), dtype=torch.float32,
                        inplace={"x": 3.0 * x.double()})


def test_an_input_value_that_passes_as_the_answer_is_not_called_unchanged():
    # x[0] = 0 doubles to 0: its bits do not change, and that is right.
    x, other = _inputs()
    x[0] = 0.0
    _run(_doubler(), x, other)


def test_a_callable_checks_the_view_itself():
    x, other = _inputs()
    seen = []
    checks.run_case(_doubler(), {"x": x, "other": other}, x.double().sum().reshape(()), dtype=torch.float32,
                    inplace={"x": seen.append})
    assert torch.equal(seen[0], 2 * x)


def test_inplace_must_name_an_input():
    x, other = _inputs()
    with pytest.raises(ValueError, match="not inputs"):
        checks.run_case(_doubler(), {"x": x, "other": other}, x.double().sum(), inplace={"y": x.double()})


def test_peak_memory_sums_what_the_call_allocates():
    x, other = _inputs()

    def allocating(x, other):
        scratch = torch.empty((7, 9), dtype=torch.float32)  # 252 bytes the answer does not need
        del scratch
        return _doubler()(x, other)

    report = checks.peak_memory(allocating, {"x": x, "other": other})
    assert report.how == "sum of allocations"
    assert report.peak_bytes == 7 * 9 * 4 + 4  # the scratch and the 0-dim result
    assert ((7, 9), "float32", 252) in report.allocations
    assert float(report.result) == pytest.approx(float(x.sum()), rel=1e-6)
    assert torch.equal(x, _inputs()[0])  # the call worked on a copy: the caller's tensor is untouched
