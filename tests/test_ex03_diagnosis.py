"""The softmax diagnosis names each known pitfall from its output alone, and nothing else.

These feed `grader.exercises._shared.softmax_checks.diagnose` outputs computed the way each mistake computes them
(in float32, as a kernel would), with no kernel and no child process: fast, and they pin the
logic the known-wrong variants in grader/exercises/ex03_softmax/wrong and ex04 rely on.
"""

from __future__ import annotations

import pytest
import torch

from grader.wire import guards
from grader.exercises._shared import softmax_checks as sm


def _x(rows=5, cols=781, seed=0):
    return torch.randn((rows, cols), generator=torch.Generator().manual_seed(seed))


def _right(x):
    return torch.softmax(x.double(), dim=1).float()


def test_right_answer_has_no_diagnosis():
    x = _x()
    assert sm.diagnose(_right(x), x) is None


@pytest.mark.parametrize("cols", [3, 781, 4097])
def test_masked_lanes_loaded_as_zero(cols):
    x = _x(cols=cols)
    block = 1 << (cols - 1).bit_length()
    padded = torch.cat([x, torch.zeros(x.shape[0], block - cols)], dim=1)
    out = torch.softmax(padded, dim=1)[:, :cols]
    message = sm.diagnose(out, x)
    assert message and message.startswith("masked lanes were loaded as 0, not -inf")
    assert f"padded with {block - cols} zero{'' if block - cols == 1 else 's'}" in message and f"{block}-wide block" in message


def test_masked_lanes_loaded_as_zero_with_a_larger_block():
    x = _x(cols=781)
    padded = torch.cat([x, torch.zeros(x.shape[0], 4096 - 781)], dim=1)
    message = sm.diagnose(torch.softmax(padded, dim=1)[:, :781], x)
    assert message and "4096-wide block" in message


def test_masked_lanes_not_zeroed_before_the_sum():
    x = _x()
    e = torch.exp(x - x.amax(dim=1, keepdim=True))
    out = e / (e.sum(dim=1, keepdim=True) + (1024 - 781))
    message = sm.diagnose(out, x)
    assert message and message.startswith("masked lanes were not zeroed before the sum")


def test_no_max_subtraction_overflows():
    x = sm.extreme_rows((6, 781), torch.float32, torch.Generator().manual_seed(1), "cpu")
    e = torch.exp(x)
    out = e / e.sum(dim=1, keepdim=True)
    message = sm.diagnose(out, x)
    assert message and message.startswith("exp overflowed: subtract the row max first")
    assert "Rows 0, 2, 4" in message


def test_nan_in_ordinary_rows_is_not_called_overflow():
    x = sm.extreme_rows((6, 781), torch.float32, torch.Generator().manual_seed(1), "cpu")
    out = _right(x)
    out[1, 5] = float("nan")  # an ordinary row: something else is wrong
    assert sm.diagnose(out, x) is None


def test_last_row_unwritten_is_one_row_short():
    x = _x()
    out = _right(x)
    guards.fill_poison(out[4])
    message = sm.diagnose(out, x)
    assert message and "the grid is one row short" in message


def test_rows_past_the_grid_unwritten_is_a_missing_stride_loop():
    x = _x(rows=11)
    out = _right(x)
    guards.fill_poison(out[8:])
    message = sm.diagnose(out, x, grid=8)
    assert message and "ignores the stride loop" in message
    # Without the grid, the same output is described, not blamed on a loop.
    assert "stride loop" not in (sm.diagnose(out, x) or "")


def test_scattered_unwritten_elements_are_left_to_the_generic_message():
    x = _x()
    out = _right(x)
    guards.fill_poison(out[2, 10:20])
    assert sm.diagnose(out, x) is None


def test_fully_masked_row_reference_is_nan_and_masked_logits_exact_zero():
    x = sm.masked_rows((4, 50), torch.float32, torch.Generator().manual_seed(2), "cpu", fully_masked_row=1)
    want = sm.reference(x)
    assert bool(torch.isnan(want[1]).all())
    others = torch.isneginf(x) & ~torch.isnan(want)
    assert bool((want[others] == 0).all()) and bool(others.any())
