"""Exercise 7's part of every attack of tests/hostile/every_exercise/: the answer an attack computes
where the grader's watch does not look, and the wrong kernel a forged verdict would have to pass.
tests/hostile_corpus.py writes each submission from the attack and this file."""

import math

import torch
import triton
import triton.language as tl

#: The kernel under the attacks whose kernel is wrong (their ATTACK and REJECTED_BY name it).
WRONG_KERNEL = "a kernel that stores zeros"


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


def wrong_kernel(q, k, v, causal=False, key_lens=None, sm_scale=None):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    zeros_kernel[(B * H * S,)](out, H, S, *out.stride(), D=D)
    return out


def torch_answer(q, k, v, causal=False, key_lens=None, sm_scale=None):
    """Attention in float64 with torch, rows that see no key as zeros. (``np`` is the attack's numpy)"""
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


def numpy_answer(np, q, k, v, causal=False, key_lens=None, sm_scale=None):
    """Attention on float64 arrays (B, H, S, D), rows that see no key as zeros (``np``: the attack's
    numpy module)."""
    B, H, S_q, D = q.shape
    S_k = k.shape[2]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    seen = np.ones((B, 1, S_q, S_k), dtype=bool)
    if causal:
        seen &= np.arange(S_k)[None, :] <= np.arange(S_q)[:, None]
    if key_lens is not None:
        seen &= np.arange(S_k)[None, None, None, :] < np.asarray(key_lens).reshape(B, 1, 1, 1)
    scores = np.where(seen, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(seen, np.exp(scores - top), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.matmul(e / np.where(total > 0, total, 1.0), v)
