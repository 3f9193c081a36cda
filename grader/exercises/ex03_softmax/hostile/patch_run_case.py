"""Hostile submission, exercise 3 (fused softmax): run_case patched away.

Every spec reaches the learner through `checks.run_case` (a module attribute looked up at call
time), so the replacement runs instead of the guards, the watch and the comparison.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces grader.judge.checks.run_case with a function that calls the learner and checks nothing, at "
          "import time, over a kernel that never divides by the row sum")
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


try:
    import grader.judge.checks

    def _run_case_without_checks(fn, inputs, expected, *, kwargs=None, **options):
        """Call the learner's function and report success: no guards, no watch, no comparison."""
        result = fn(*inputs.values(), **(kwargs or {}))
        return grader.judge.checks.CaseReport(result, [], dict(inputs))

    grader.judge.checks.run_case = _run_case_without_checks
except ImportError:  # no grader in this process: only the wrong kernel below is left
    pass


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    no_division_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols,
                                  BLOCK=triton.next_power_of_2(n_cols))
    return out
