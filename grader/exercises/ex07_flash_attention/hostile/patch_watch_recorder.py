"""Hostile submission, exercise 7 (FlashAttention forward): the torch-op recorder patched away.

The answer is right but no kernel computed it: the grader's torch-op watch would say "computed with
torch", had the file not disabled it from inside the process.
"""

import math

import torch
import triton
import triton.language as tl

ATTACK = ("replaces the torch-op recorder of grader.learner.call_watch so that it records nothing, then computes the "
          "answer with torch and launches a kernel that does nothing")
KIND = "patch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("best effort: the batch static check rejects `import grader`; the judge's comparison passes (the "
               "numbers are right), so `grade exercise` can only warn")


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


try:
    import grader.learner.call_watch

    def _see_nothing(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

    # The watch's TorchDispatchMode now records no torch op (and poisons no allocation).
    grader.learner.call_watch._Recorder.__torch_dispatch__ = _see_nothing
except ImportError:
    pass


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    out = _answer(q, k, v, causal, key_lens, sm_scale)  # torch computes the whole answer in plain sight
    noop_kernel[(1,)](out)
    return out
