"""Hostile submission, exercise 2 (bias + GELU): the comparison patched away.

Today the learner's file is imported into the process that compares, so assigning to a module
attribute of the grader changes the comparison for every check that follows.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces grader.judge.compare.expect_close and grader.judge.checks.expect_close with a function that accepts "
          "anything, at import time, over a kernel that adds the bias after the GELU")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that adds the bias after "
               "the GELU); nothing the learner's process does reaches the judge")


@triton.jit
def gelu_then_bias_kernel(x_ptr, bias_ptr, out_ptr, n_elements, N, x_row_stride, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    row = offsets // N
    col = offsets % N
    x = tl.load(x_ptr + row * x_row_stride + col, mask=mask).to(tl.float32)
    b = tl.load(bias_ptr + col, mask=mask).to(tl.float32)
    # WRONG on purpose: gelu(x) + bias, not gelu(x + bias). Only a forged verdict passes it.
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offsets, (g + b).to(out_ptr.dtype.element_ty), mask=mask)


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


def bias_gelu(x, bias):
    M, N = x.shape
    out = torch.empty_like(x)  # contiguous (empty_like of a view with gaps is contiguous)
    n = M * N
    gelu_then_bias_kernel[(triton.cdiv(n, 1024),)](x, bias, out, n, N, x.stride(0), BLOCK=1024)
    return out


# --- the byte model (right: the attack is about the kernel) --------------------------------

def fused_bytes(m, n, element_size):
    return (2 * m * n + n) * element_size


def unfused_bytes(m, n, element_size):
    return (4 * m * n + n) * element_size
