"""Hostile submission, exercise 7 (FlashAttention forward): the work in a pre-run hook.

JITFunction and InterpretedFunction call their pre-run hooks inside `run`.
"""

import math

import torch
import triton
import triton.language as tl

ATTACK = ("does the work in a hook added with kernel.add_pre_run_hook, which Triton runs inside the launch "
          "where the grader's watch takes every torch op for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("best effort: nothing a static check can name; the watch must record torch ops of learner "
               "callbacks run during a launch; the judge's comparison passes (the numbers are right, only their "
               "origin is wrong)")


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


#: Work to run where the grader's watch does not look (filled by the launcher, emptied by the hook).
_PENDING = []


def _deliver(*args, **kwargs):
    while _PENDING:
        _PENDING.pop()()
    return 1


@triton.jit
def hooked_kernel(out_ptr):
    pid = tl.program_id(0)


hooked_kernel.add_pre_run_hook(_deliver)


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    out = torch.empty_like(q)
    _PENDING.append(lambda: out.copy_(_answer(q, k, v, causal, key_lens, sm_scale)))
    hooked_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
