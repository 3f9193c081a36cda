"""Wrong: the scores q·kᵀ are computed with torch.matmul; a Triton kernel does the softmax and P·V.

The answer is right, but torch wrote the whole (B, H, S, S) score matrix to memory, which is
what FlashAttention exists to avoid (and the grader asks for the answer from your kernel).
"""

import math

import torch
import triton
import triton.language as tl

EXPECTED = "computed with torch"
SELECT = "matches_reference and B1-H2-S97-D64 and not causal"


@triton.jit
def softmax_pv_kernel(s_ptr, v_ptr, out_ptr, key_lens_ptr,
                      stride_sb, stride_sh, stride_sm, stride_sn, stride_vb, stride_vh, stride_vn, stride_vd,
                      stride_ob, stride_oh, stride_om, stride_od, n_heads, seq_q, seq_k,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      CAUSAL: tl.constexpr, HAS_KEY_LENS: tl.constexpr):
    # Reads the scores back from memory: the online softmax and P·V are as in FlashAttention.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    kv_len = seq_k
    if HAS_KEY_LENS:
        kv_len = tl.minimum(tl.load(key_lens_ptr + b).to(tl.int32), seq_k)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start_n in range(0, kv_len, BLOCK_N):
        cols = start_n + offs_n
        ok = (cols[None, :] < kv_len) & (offs_m[:, None] < seq_q)
        if CAUSAL:
            ok = ok & (cols[None, :] <= offs_m[:, None])
        s = tl.load(s_ptr + b * stride_sb + h * stride_sh + offs_m[:, None] * stride_sm + cols[None, :] * stride_sn,
                    mask=ok, other=float("-inf"))
        v = tl.load(v_ptr + b * stride_vb + h * stride_vh + cols[:, None] * stride_vn + offs_d[None, :] * stride_vd,
                    mask=cols[:, None] < kv_len, other=0.0)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    tl.store(out_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             (acc / l_safe[:, None]).to(out_ptr.dtype.element_ty), mask=offs_m[:, None] < seq_q)


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    B, H, seq_q, D = q.shape
    seq_k = k.shape[2]
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    scores = torch.matmul(q.float(), k.float().transpose(-1, -2)) * sm_scale
    out = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 32
    grid = (triton.cdiv(seq_q, BLOCK_M), B * H)
    softmax_pv_kernel[grid](scores, v, out, key_lens if key_lens is not None else q,
                            *scores.stride(), *v.stride(), *out.stride(), H, seq_q, seq_k,
                            HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                            HAS_KEY_LENS=key_lens is not None)
    return out
