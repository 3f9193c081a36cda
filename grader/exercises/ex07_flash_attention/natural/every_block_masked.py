"""No work skipped: every query block walks all ``seq_k`` keys and lets the masks (padding and
causal) zero what it must not see; the final division is ``tl.where(l > 0, acc / l, 0)``; 32 x 32
tiles in the interpreter. Differs from the solution, which stops at the diagonal and at
``key_lens`` and splits masked from unmasked blocks (this one is slower on a GPU, and correct)."""

import math
import os

import torch
import triton
import triton.language as tl

SELECT = "sm_scale or strided_inputs or masked_keys_ignored or key_lens or running_max_changes or bf16"

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
    off_b = tl.program_id(1) // n_heads
    off_h = tl.program_id(1) % n_heads
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_ptr + off_b * stride_qb + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=offs_m[:, None] < seq_q, other=0.0)
    valid_keys = seq_k
    if HAS_KEY_LENS:
        valid_keys = tl.load(key_lens_ptr + off_b)
    m_i = tl.zeros((BLOCK_M,), tl.float32) - float("inf")
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start in range(0, seq_k, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        in_seq = offs_n < seq_k
        k = tl.load(k_ptr + off_b * stride_kb + off_h * stride_kh + offs_n[:, None] * stride_kn
                    + offs_d[None, :] * stride_kd, mask=in_seq[:, None], other=0.0)
        v = tl.load(v_ptr + off_b * stride_vb + off_h * stride_vh + offs_n[:, None] * stride_vn
                    + offs_d[None, :] * stride_vd, mask=in_seq[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k))
        keep = (offs_n[None, :] < valid_keys) & in_seq[None, :]
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk * qk_scale, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        safe = tl.where(m_ij > float("-inf"), m_ij, 0.0)
        p = tl.exp(qk - safe[:, None])
        correction = tl.exp(m_i - safe)
        acc = acc * correction[:, None] + tl.dot(p.to(q.dtype), v)
        l_i = l_i * correction + tl.sum(p, 1)
        m_i = m_ij
    out = tl.where(l_i[:, None] > 0, acc / l_i[:, None], 0.0)
    o_ptrs = out_ptr + off_b * stride_ob + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od
    tl.store(o_ptrs, out.to(out_ptr.dtype.element_ty), mask=offs_m[:, None] < seq_q)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              key_lens: torch.Tensor | None = None, sm_scale: float | None = None) -> torch.Tensor:
    B, H, seq_q, D = q.shape
    seq_k = k.shape[2]
    if D not in HEAD_DIMS:
        raise ValueError(f"head size D = {D}: this kernel supports {HEAD_DIMS}")
    sm_scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    out = torch.empty_like(q)
    block = 32 if os.environ.get("TRITON_INTERPRET") == "1" else 64
    grid = (triton.cdiv(seq_q, block), B * H)
    attention_kernel[grid](q, k, v, out, key_lens if key_lens is not None else q,
                           *q.stride(), *k.stride(), *v.stride(), *out.stride(), H, seq_q, seq_k, sm_scale,
                           HEAD_DIM=D, BLOCK_M=block, BLOCK_N=block, CAUSAL=causal,
                           HAS_KEY_LENS=key_lens is not None, num_warps=4)
    return out
