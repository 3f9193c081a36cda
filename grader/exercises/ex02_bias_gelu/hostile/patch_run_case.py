"""Hostile submission, exercise 2 (bias + GELU): run_case patched away.

Every spec reaches the learner through `checks.run_case` (a module attribute looked up at call
time), so the replacement runs instead of the guards, the watch and the comparison.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces grader.judge.checks.run_case with a function that calls the learner and checks nothing, at "
          "import time, over a kernel that adds the bias after the GELU")
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


try:
    import grader.judge.checks

    def _run_case_without_checks(fn, inputs, expected, *, kwargs=None, **options):
        """Call the learner's function and report success: no guards, no watch, no comparison."""
        result = fn(*inputs.values(), **(kwargs or {}))
        return grader.judge.checks.CaseReport(result, [], dict(inputs))

    grader.judge.checks.run_case = _run_case_without_checks
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
