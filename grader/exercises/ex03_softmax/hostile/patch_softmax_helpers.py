"""Hostile submission, exercise 3 (fused softmax): the softmax expectations patched away.

The shared softmax helpers are imported by the spec after the learner's file, from the module object
the learner has already changed.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces the softmax spec's expect_softmax and expect_fully_masked with checks that accept "
          "anything, at import time, over a kernel that never divides by the row sum")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that never divides by the "
               "row sum); nothing the learner's process does reaches the judge")


@triton.jit
def no_division_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    # WRONG on purpose: exp(x - max) is never divided by its sum. Only a forged verdict passes it.
    y = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def _accept_anything(out):
    return None


try:
    import grader.exercises._shared.softmax_checks as _softmax

    # The spec calls sm.check -> expect_softmax and sm.expect_fully_masked: both now accept anything.
    _softmax.expect_softmax = lambda x, dtype, **options: _accept_anything
    _softmax.expect_fully_masked = lambda x, row, **options: _accept_anything
except ImportError:
    pass


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    no_division_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols,
                                  BLOCK=triton.next_power_of_2(n_cols))
    return out
