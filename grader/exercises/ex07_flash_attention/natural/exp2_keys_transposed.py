"""Keys loaded already transposed, as a (HEAD_DIM, BLOCK_N) tile, so the scores are
``tl.dot(q, kT)`` with no ``tl.trans``; base-2 exponentials with log2(e) folded into the scale;
the key loop over ``tl.range`` with int64 key offsets from ``start_n.to(tl.int64)``; 64 x 64
tiles in the interpreter. Differs from the solution in the layout of K, the loop and the tiles."""

import math
import os

import torch
import triton
import triton.language as tl

SELECT = "matches_reference or key_lens or bf16 or cross_attention"

HEAD_DIMS = (16, 32, 64, 128)
LOG2E = 1.4426950408889634


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, out_ptr, key_lens_ptr,
                     stride_qb, stride_qh, stride_qm, stride_qd,
                     stride_kb, stride_kh, stride_kn, stride_kd,
                     stride_vb, stride_vh, stride_vn, stride_vd,
                     stride_ob, stride_oh, stride_om, stride_od,
                     n_heads, seq_q, seq_k, qk_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     CAUSAL: tl.constexpr, HAS_KEY_LENS: tl.constexpr):
    pid_m = tl.program_id(0)
    b = (tl.program_id(1) // n_heads).to(tl.int64)
    h = (tl.program_id(1) % n_heads).to(tl.int64)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    keys = tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + rows[:, None] * stride_qm + dims[None, :] * stride_qd,
                mask=rows[:, None] < seq_q, other=0.0)
    n_keys = seq_k
    if HAS_KEY_LENS:
        n_keys = tl.minimum(tl.load(key_lens_ptr + b).to(tl.int32), seq_k)
    hi = n_keys
    if CAUSAL:
        hi = tl.minimum(hi, (pid_m + 1) * BLOCK_M)
    m = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l = tl.zeros((BLOCK_M,), tl.float32)  # noqa: E741
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start_n in tl.range(0, hi, BLOCK_N):
        kv = start_n.to(tl.int64) + keys
        valid = kv < n_keys
        kT = tl.load(k_ptr + b * stride_kb + h * stride_kh + dims[:, None] * stride_kd + kv[None, :] * stride_kn,
                     mask=valid[None, :], other=0.0)
        s = tl.dot(q, kT) * qk_scale
        ok = valid[None, :]
        if CAUSAL:
            ok = ok & (kv[None, :] <= rows[:, None])
        s = tl.where(ok, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp2(s - shift[:, None])
        scale = tl.exp2(m - shift)
        v = tl.load(v_ptr + b * stride_vb + h * stride_vh + kv[:, None] * stride_vn + dims[None, :] * stride_vd,
                    mask=valid[:, None], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * scale[:, None])
        l = l * scale + tl.sum(p, axis=1)  # noqa: E741
        m = m_new
    l_safe = tl.where(l > 0.0, l, 1.0)
    tl.store(out_ptr + b * stride_ob + h * stride_oh + rows[:, None] * stride_om + dims[None, :] * stride_od,
             (acc / l_safe[:, None]).to(out_ptr.dtype.element_ty), mask=rows[:, None] < seq_q)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              key_lens: torch.Tensor | None = None, sm_scale: float | None = None) -> torch.Tensor:
    B, H, seq_q, D = q.shape
    seq_k = k.shape[2]
    if D not in HEAD_DIMS:
        raise ValueError(f"head size D = {D}: this kernel supports {HEAD_DIMS}")
    scale = (1.0 / math.sqrt(D) if sm_scale is None else sm_scale) * LOG2E
    out = torch.empty_like(q)
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    BLOCK_M, BLOCK_N = (64, 64) if interpreted else (128, 64)
    grid = (triton.cdiv(seq_q, BLOCK_M), B * H)
    attention_kernel[grid](q, k, v, out, key_lens if key_lens is not None else q,
                           *q.stride(), *k.stride(), *v.stride(), *out.stride(), H, seq_q, seq_k, scale,
                           HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                           HAS_KEY_LENS=key_lens is not None, num_warps=4 if interpreted else 8,
                           num_stages=1 if interpreted else 3)
    return out
