"""Hostile submission, exercise 7 (FlashAttention forward): the work in numpy.

numpy reads and writes the tensors' memory directly: no torch op runs at all.
"""

import math

import numpy as np
import torch
import triton
import triton.language as tl

ATTACK = ("computes the answer with numpy on the inputs' .numpy() views and writes it through out.numpy(), "
          "then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = (".numpy()",)
REJECTED_BY = ("best effort: the batch static check rejects `.numpy()` on inputs; the judge's comparison passes "
               "(the numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _np(t):
    """The values of ``t`` as a float64 numpy array, without any torch op (bf16 through its bits)."""
    if t.dtype == torch.bfloat16:
        bits = t.view(torch.int16).numpy().astype(np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    return t.numpy().astype(np.float64)


def _put(out, values):
    """Write float64 ``values`` into out's memory through numpy, rounded to out's dtype."""
    if out.dtype == torch.bfloat16:
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        out.view(torch.int16).numpy()[...] = rounded.view(np.int16)
    else:
        target = out.numpy()
        target[...] = values.astype(target.dtype)


def _numpy_attention(q, k, v, causal, lens, sm_scale):
    """q, k, v as float64 numpy arrays (B, H, S, D); lens a list or None."""
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


def _numpy_answer(q, k, v, causal, key_lens, sm_scale):
    lens = None if key_lens is None else key_lens.numpy().tolist()
    return _numpy_attention(_np(q), _np(k), _np(v), causal, lens, sm_scale)


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    out = torch.empty_like(q)
    _put(out, _numpy_answer(q, k, v, causal, key_lens, sm_scale))
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
