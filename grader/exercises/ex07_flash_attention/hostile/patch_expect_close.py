"""Hostile submission, exercise 7 (FlashAttention forward): the comparison patched away.

Today the learner's file is imported into the process that compares, so assigning to a module
attribute of the grader changes the comparison for every check that follows.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("replaces grader.judge.compare.expect_close and grader.judge.checks.expect_close with a function that accepts "
          "anything, at import time, over a kernel that stores zeros")
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


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    zeros_kernel[(B * H * S,)](out, H, S, *out.stride(), D=D)
    return out
