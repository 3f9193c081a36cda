"""Hostile submission, exercise 7 (FlashAttention forward): run_case patched away.

Every spec reaches the learner through `checks.run_case` (a module attribute looked up at call
time), so the replacement runs instead of the guards, the watch and the comparison.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces grader.judge.checks.run_case (and grader.judge.compare.expect_close, which one check calls "
          "directly) with a function that calls the learner and checks nothing, at import time, over a "
          "kernel that stores zeros")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that stores zeros); "
               "nothing the learner's process does reaches the judge")


@triton.jit
def zeros_kernel(out_ptr, H, S, so_b, so_h, so_s, so_d, D: tl.constexpr):
    # WRONG on purpose: one program per (batch, head, row) stores zeros; no attention at all.
    # Only a forged verdict passes it (rows that see no key are the only right ones).
    pid = tl.program_id(0)
    b = pid // (H * S)
    h = (pid // S) % H
    s = pid % S
    d = tl.arange(0, D)
    tl.store(out_ptr + b * so_b + h * so_h + s * so_s + d * so_d,
             tl.zeros((D,), tl.float32).to(out_ptr.dtype.element_ty))


try:
    import grader.judge.checks

    def _run_case_without_checks(fn, inputs, expected, *, kwargs=None, **options):
        """Call the learner's function and report success: no guards, no watch, no comparison."""
        result = fn(*inputs.values(), **(kwargs or {}))
        return grader.judge.checks.CaseReport(result, [], dict(inputs))

    grader.judge.checks.run_case = _run_case_without_checks
    # test_no_score_matrix calls the learner and expect_close itself, not through run_case.
    import grader.judge.compare
    grader.judge.compare.expect_close = lambda *args, **kwargs: None
except ImportError:  # no grader in this process: only the wrong kernel below is left
    pass


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    zeros_kernel[(B * H * S,)](out, H, S, *out.stride(), D=D)
    return out
