"""Hostile submission, exercise 1 (vector add): the comparison patched away.

Today the learner's file is imported into the process that compares, so assigning to a module
attribute of the grader changes the comparison for every check that follows.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces grader.judge.compare.expect_close and grader.judge.checks.expect_close with a function that accepts "
          "anything, at import time, over a kernel that computes x - y")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that computes x - y); "
               "nothing the learner's process does reaches the judge")


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # WRONG on purpose: x - y, not x + y. Only a forged verdict passes this kernel.
    tl.store(out_ptr + offsets, (x - y).to(out_ptr.dtype.element_ty), mask=mask)


def _accept_anything(*args, **kwargs):
    return None


try:
    import grader.judge.checks
    import grader.judge.compare

    # The specs are imported after this file (the grader imports the learner first), so
    # `from grader.judge.compare import expect_close` in a spec picks up this function too.
    grader.judge.compare.expect_close = _accept_anything
    grader.judge.checks.expect_close = _accept_anything
except ImportError:  # no grader in this process: only the wrong kernel below is left
    pass


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
