"""Hostile submission, exercise 1 (vector add): run_case patched away.

Every spec reaches the learner through `checks.run_case` (a module attribute looked up at call
time), so the replacement runs instead of the guards, the watch and the comparison.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces grader.judge.checks.run_case with a function that calls the learner and checks nothing, at "
          "import time, over a kernel that computes x - y")
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


try:
    import grader.judge.checks

    def _run_case_without_checks(fn, inputs, expected, *, kwargs=None, **options):
        """Call the learner's function and report success: no guards, no watch, no comparison."""
        result = fn(*inputs.values(), **(kwargs or {}))
        return grader.judge.checks.CaseReport(result, [], dict(inputs))

    grader.judge.checks.run_case = _run_case_without_checks
except ImportError:  # no grader in this process: only the wrong kernel below is left
    pass


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
