"""The plain FlashAttention-2 loop: one loop over every key block the query block needs, with
the padding and causal masks applied at every step, natural-base ``tl.exp`` with the scale on the
scores, and a guard for rows whose running max is still -inf. Differs from the solution, which
splits the keys into an unmasked loop and a masked one and works in base 2."""

import math
import os

import torch
import triton
import triton.language as tl

HEAD_DIMS = (16, 32, 64, 128)


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, out_ptr, key_lens_ptr,
                     stride_qb, stride_qh, stride_qm, stride_qd,
                     stride_kb, stride_kh, stride_kn, stride_kd,
                     stride_vb, stride_vh, stride_vn, stride_vd,
                     stride_ob, stride_oh, stride_om, stride_od,
                     n_heads, seq_q, seq_k, qk_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     CAUSAL: tl.constexpr, HAS_KEY_LENS: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    q_base = q_ptr + b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    k_base = k_ptr + b.to(tl.int64) * stride_kb + h.to(tl.int64) * stride_kh
    v_base = v_ptr + b.to(tl.int64) * stride_vb + h.to(tl.int64) * stride_vh
    o_base = out_ptr + b.to(tl.int64) * stride_ob + h.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                mask=offs_m[:, None] < seq_q, other=0.0)

    kv_len = seq_k
    if HAS_KEY_LENS:
        kv_len = tl.minimum(tl.load(key_lens_ptr + b).to(tl.int32), seq_k)
    end = kv_len
    if CAUSAL:
        end = tl.minimum(end, (start_m + 1) * BLOCK_M)

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start_n in range(0, end, BLOCK_N):
        cols = start_n + offs_n
        key_ok = cols < kv_len
        k = tl.load(k_base + cols[:, None] * stride_kn + offs_d[None, :] * stride_kd, mask=key_ok[:, None], other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vd, mask=key_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        visible = key_ok[None, :]
        if CAUSAL:
            visible = visible & (cols[None, :] <= offs_m[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp(s - m_ref[:, None])
        alpha = tl.exp(m_i - m_ref)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od, out.to(out_ptr.dtype.element_ty),
             mask=offs_m[:, None] < seq_q)


def _config(head_dim: int, causal: bool) -> tuple[int, int, int, int]:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return 64, 32, 4, 1
    return 128, 64, 8, 3


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              key_lens: torch.Tensor | None = None, sm_scale: float | None = None) -> torch.Tensor:
    B, H, seq_q, D = q.shape
    seq_k = k.shape[2]
    if D not in HEAD_DIMS:
        raise ValueError(f"head size D = {D}: this kernel supports {HEAD_DIMS}")
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    out = torch.empty_like(q)
    BLOCK_M, BLOCK_N, num_warps, num_stages = _config(D, causal)
    grid = (triton.cdiv(seq_q, BLOCK_M), B * H)
    attention_kernel[grid](q, k, v, out, key_lens if key_lens is not None else q,
                           *q.stride(), *k.stride(), *v.stride(), *out.stride(),
                           H, seq_q, seq_k, sm_scale,
                           HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                           HAS_KEY_LENS=key_lens is not None, num_warps=num_warps, num_stages=num_stages)
    return out
