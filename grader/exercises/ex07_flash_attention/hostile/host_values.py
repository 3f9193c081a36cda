"""Hostile submission, exercise 7 (FlashAttention forward): the work on host values.

Neither .tolist(), torch.tensor(list) nor assigning .data is an op the grader's dispatch mode sees
(.item() is).
"""

import math

import numpy as np
import torch
import triton
import triton.language as tl

ATTACK = ("computes the answer on host values from .tolist() and puts them into the empty output with "
          "`out.data = torch.tensor(...)`, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = (".tolist()", ".data =")
REJECTED_BY = ("best effort: the batch static check rejects `.tolist()` on inputs; the judge's comparison passes "
               "(the numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _numpy_attention(q, k, v, causal, lens, sm_scale):
    """q, k, v as float64 arrays (B, H, S, D) built from host lists; lens a list or None."""
    B, H, S_q, D = q.shape
    S_k = k.shape[2]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    seen = np.ones((B, 1, S_q, S_k), dtype=bool)
    if causal:
        seen &= np.arange(S_k)[None, :] <= np.arange(S_q)[:, None]
    if lens is not None:
        seen &= np.arange(S_k)[None, None, None, :] < np.asarray(lens).reshape(B, 1, 1, 1)
    scores = np.where(seen, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(seen, np.exp(scores - top), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.matmul(e / np.where(total > 0, total, 1.0), v)


def _host_answer(q, k, v, causal, key_lens, sm_scale):
    """Attention on host values: .tolist() is not an op the grader's watch sees."""
    lens = None if key_lens is None else key_lens.tolist()
    arrays = [np.array(t.tolist(), dtype=np.float64) for t in (q, k, v)]
    return _numpy_attention(*arrays, causal, lens, sm_scale).tolist()


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    out = torch.empty_like(q)
    out.data = torch.tensor(_host_answer(q, k, v, causal, key_lens, sm_scale), dtype=q.dtype, device=q.device)
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
