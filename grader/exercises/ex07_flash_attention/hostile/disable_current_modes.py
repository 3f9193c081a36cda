"""Hostile submission, exercise 7 (FlashAttention forward): the work inside _disable_current_modes.

Every dispatch mode on the stack, the grader's included, is popped for the block's duration.
"""

from torch.utils._python_dispatch import _disable_current_modes
import math

import torch
import triton
import triton.language as tl

ATTACK = ("computes the answer with torch inside torch.utils._python_dispatch._disable_current_modes(), "
          "which pops the grader's dispatch mode, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("torch.utils._python_dispatch (a private torch API)",)
REJECTED_BY = ("best effort: the batch static check rejects private torch dispatch APIs; the judge's comparison "
               "passes (the numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _answer(q, k, v, causal=False, key_lens=None, sm_scale=None):
    """Attention in float64 with torch, rows that see no key as zeros."""
    B, H, S_q, D = q.shape
    S_k = k.shape[2]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    scores = torch.matmul(q.double(), k.double().transpose(-1, -2)) * scale
    rows = torch.arange(S_q, device=q.device)[:, None]
    cols = torch.arange(S_k, device=q.device)[None, :]
    seen = torch.ones(B, 1, S_q, S_k, dtype=torch.bool, device=q.device)
    if causal:
        seen = seen & (cols <= rows)
    if key_lens is not None:
        seen = seen & (cols < key_lens.reshape(B, 1, 1, 1))
    p = torch.softmax(scores.masked_fill(~seen, float("-inf")), dim=-1).nan_to_num(0.0)
    return torch.matmul(p, v.double()).to(q.dtype)


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    out = torch.empty_like(q)
    with _disable_current_modes():
        out.copy_(_answer(q, k, v, causal, key_lens, sm_scale))
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
