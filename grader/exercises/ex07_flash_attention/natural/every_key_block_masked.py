"""Correct, and slower than it needs to be: every program walks every key block up to the
sequence's length and masks what it must not see, the causal diagonal included.

It differs from the solution in its loop bounds: the solution stops each causal query block
at the diagonal (query block i needs key blocks 0 to i only) and runs the blocks every row
sees without masks. Here the blocks above the diagonal are loaded, multiplied and masked
away, about twice the work of a causal attention; the answer is the same. `grade show 7`
draws the difference: every program reads every key of its sequence.
"""

import math

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, out_ptr, key_lens_ptr,
                     stride_qb, stride_qh, stride_qm, stride_qd, stride_kb, stride_kh, stride_kn, stride_kd,
                     stride_vb, stride_vh, stride_vn, stride_vd, stride_ob, stride_oh, stride_om, stride_od,
                     n_heads, seq_q, seq_k, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, HAS_KEY_LENS: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                mask=offs_m[:, None] < seq_q, other=0.0)
    kv_len = seq_k
    if HAS_KEY_LENS:
        kv_len = tl.minimum(tl.load(key_lens_ptr + b).to(tl.int32), seq_k)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start_n in range(0, kv_len, BLOCK_N):  # every key block, whatever the query block
        cols = start_n + offs_n
        col_ok = cols < kv_len
        k = tl.load(k_ptr + b * stride_kb + h * stride_kh + cols[:, None] * stride_kn + offs_d[None, :] * stride_kd,
                    mask=col_ok[:, None], other=0.0)
        v = tl.load(v_ptr + b * stride_vb + h * stride_vh + cols[:, None] * stride_vn + offs_d[None, :] * stride_vd,
                    mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        visible = col_ok[None, :]
        if CAUSAL:
            visible = visible & (cols[None, :] <= offs_m[:, None])
        s = tl.where(visible, s, float("-inf"))
        # Key 0 is in the first block and every row sees it, so m_new is finite from then on.
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # a row with no visible key: acc is 0, so zeros
    tl.store(out_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             (acc / l_safe[:, None]).to(out_ptr.dtype.element_ty), mask=offs_m[:, None] < seq_q)


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    B, H, seq_q, D = q.shape
    seq_k = k.shape[2]
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    out = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 32
    grid = (triton.cdiv(seq_q, BLOCK_M), B * H)
    attention_kernel[grid](q, k, v, out, key_lens if key_lens is not None else q,
                           *q.stride(), *k.stride(), *v.stride(), *out.stride(), H, seq_q, seq_k, sm_scale * LOG2E,
                           HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                           HAS_KEY_LENS=key_lens is not None)
    return out
