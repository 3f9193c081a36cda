"""
Exercise 7 · FlashAttention forward — reference solution
========================================================

In this exercise you will learn:

* how attention, ``O = softmax(scale · Q Kᵀ + mask) V``, runs without ever storing the S
  × S score matrix: each program owns a block of query rows, walks the keys and values
  in blocks, and folds each tile of scores into a running max ``m``, running sum ``ℓ``
  and output accumulator ``acc`` (the online softmax of exercise 5, with the values
  included);
* why masked scores are ``-inf`` (they add exactly ``e^-inf = 0``) and why a row with
  *no* visible key then needs one guard (``ℓ = 0``: return zeros, not ``0 / 0 = NaN``);
* how to skip work instead of masking it: causal query blocks stop at the diagonal, and
  ``key_lens`` stops every program at its sequence's length; only the blocks that
  straddle a boundary pay for a mask (the "unmasked loop + masked loop" split of
  FlashAttention-2).

Layout: one program per (query block, batch · head). Inside it, keys ``[0, full)`` are
visible to every row of the block and go through the loop without masks; keys ``[full,
end)`` (the diagonal when causal, the last partial block of the sequence) go through the
same loop with masks. Keys at ``end`` and beyond are never loaded.

Numbers: a plainer FlashAttention-2 forward, one masked loop for every block, is
measured against PyTorch's ``scaled_dot_product_attention`` in
docs/measurements/h200-attention-2026-11-30.json (key ``ratio``, causal and not). This
kernel's own numbers come from ``python -m tools.benchmarks ex07_flash_attention``
(docs/measurements/h200-ex07-flash-attention.json,
``rows[kernel=solution].ratio_to_sdpa``).
"""

import math
import os

import torch
import triton
import triton.language as tl

#: exp(x) = exp2(x · log2(e)). exp2 is the GPU's native instruction (exp is exp2 plus a
#: multiply), so the kernel works in base 2 throughout: scores are multiplied by
#: sm_scale · log2(e) once, and m, ℓ and the rescaling factors are all in base 2. The
#: softmax is unchanged.
LOG2E = 1.4426950408889634

HEAD_DIMS = (16, 32, 64, 128)


@triton.jit
def _attend(
    acc,  # (BLOCK_M, HEAD_DIM) float32: running sum of e^(s - m) · v
    l_i,  # (BLOCK_M,) float32: running sum of e^(s - m)
    m_i,  # (BLOCK_M,) float32: running max of the (base-2) scores
    q,  # (BLOCK_M, HEAD_DIM) this program's query block, in the input dtype
    k_base,  # pointer to key 0 of this (batch, head)
    v_base,  # pointer to value 0 of this (batch, head)
    stride_kn, stride_kd,  # key strides: between keys, between head-dim elements
    stride_vn, stride_vd,  # value strides
    offs_m,  # (BLOCK_M,) the query rows of this block
    start, end,  # key range [start, end) to fold in; start is a multiple of BLOCK_N
    kv_len,  # keys at kv_len and beyond are padding (masked)
    qk_scale,  # sm_scale · log2(e): scores in base 2
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    MASKED: tl.constexpr,  # False: every key in [start, end) is visible to every row
):
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(start, end, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k_ptrs = k_base + cols[:, None] * stride_kn + offs_d[None, :] * stride_kd
        v_ptrs = v_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vd
        if MASKED:
            # Padding keys are not even read (other=0): they may hold anything, even
            # NaN.
            k = tl.load(k_ptrs, mask=cols[:, None] < kv_len, other=0.0)
        else:
            k = tl.load(k_ptrs)
        # One BLOCK_M x BLOCK_N tile of scores, float32, on the tensor cores. Never
        # stored.
        s = tl.dot(q, tl.trans(k))
        if MASKED:
            # The mask comes BEFORE the max: a masked score must not raise m, or one
            # large padding score makes e^(s - m) underflow to 0 for every real key of
            # the row.
            visible = cols[None, :] < kv_len
            if CAUSAL:
                visible = visible & (cols[None, :] <= offs_m[:, None])
            s = tl.where(visible, s * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])  # e^-inf = 0 exactly for masked keys
        else:
            # max(s) · scale = max(s · scale) for scale > 0, and s · scale - m is one
            # fused multiply-add per score: the unmasked loop, where the time goes,
            # saves a multiply.
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.math.exp2(s * qk_scale - m_new[:, None])
        # The online-softmax correction: everything summed so far was relative to the
        # old max. No -inf - (-inf) here: the first block a row goes through holds a key
        # it sees (key 0 in the unmasked loop; key `full` in the masked one, below
        # kv_len and, when causal, below the block's first row), so m is finite from the
        # first block on.
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if MASKED:
            v = tl.load(v_ptrs, mask=cols[:, None] < kv_len, other=0.0)
        else:
            v = tl.load(v_ptrs)
        # P is rounded to the input dtype for the second tensor-core product (as every
        # FlashAttention does); the accumulator stays float32.
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention_kernel(
    q_ptr,  # pointer to the queries, (B, H, S_q, D)
    k_ptr,  # pointer to the keys, (B, H, S_k, D)
    v_ptr,  # pointer to the values, (B, H, S_k, D)
    out_ptr,  # pointer to the output, (B, H, S_q, D)
    # pointer to the (B,) valid key lengths; not read when HAS_KEY_LENS is False
    key_lens_ptr,
    # query strides: batch, head, row, head-dim element
    stride_qb, stride_qh, stride_qm, stride_qd,
    stride_kb, stride_kh, stride_kn, stride_kd,  # key strides
    stride_vb, stride_vh, stride_vn, stride_vd,  # value strides
    stride_ob, stride_oh, stride_om, stride_od,  # output strides
    n_heads,  # H
    seq_q,  # S_q: query rows per (batch, head)
    seq_k,  # S_k: keys per (batch, head)
    qk_scale,  # sm_scale · log2(e)
    HEAD_DIM: tl.constexpr,  # D: 16, 32, 64 or 128
    BLOCK_M: tl.constexpr,  # query rows per program
    BLOCK_N: tl.constexpr,  # keys per loop step
    CAUSAL: tl.constexpr,  # query i sees keys j <= i
    HAS_KEY_LENS: tl.constexpr,  # key_lens was given
):
    pid_m = tl.program_id(0)
    if CAUSAL:
        # Causal work grows with the query block (block i needs i + 1 key blocks): start
        # the longest ones first so the short ones fill the gaps at the end of the
        # launch.
        start_m = tl.num_programs(0) - 1 - pid_m
    else:
        start_m = pid_m
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    # 64-bit base offsets: B · H · S · D passes 2^31 elements at long sequences.
    q_base = q_ptr + b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    k_base = k_ptr + b.to(tl.int64) * stride_kb + h.to(tl.int64) * stride_kh
    v_base = v_ptr + b.to(tl.int64) * stride_vb + h.to(tl.int64) * stride_vh
    o_base = out_ptr + b.to(tl.int64) * stride_ob + h.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m[:, None] < seq_q
    # Loaded once; stays on chip for the whole loop. Rows past S_q are zeros (never
    # stored).
    q = tl.load(
        q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
        mask=row_ok,
        other=0.0,
    )

    # Which keys this block needs: [0, end). Keys [0, full) are visible to every row of
    # the block.
    kv_len = seq_k
    if HAS_KEY_LENS:
        kv_len = tl.minimum(
            tl.maximum(tl.load(key_lens_ptr + b).to(tl.int32), 0), seq_k
        )
    end = kv_len
    full = kv_len
    if CAUSAL:
        # the block's last row sees no further
        end = tl.minimum(end, (start_m + 1) * BLOCK_M)
        # its first row sees everything before it
        full = tl.minimum(full, start_m * BLOCK_M)
    full = (full // BLOCK_N) * BLOCK_N  # whole key blocks only

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    acc, l_i, m_i = _attend(
        acc,
        l_i,
        m_i,
        q,
        k_base,
        v_base,
        stride_kn,
        stride_kd,
        stride_vn,
        stride_vd,
        offs_m,
        0,
        full,
        kv_len,
        qk_scale,
        HEAD_DIM=HEAD_DIM,
        BLOCK_N=BLOCK_N,
        CAUSAL=CAUSAL,
        MASKED=False,
    )
    acc, l_i, m_i = _attend(
        acc,
        l_i,
        m_i,
        q,
        k_base,
        v_base,
        stride_kn,
        stride_kd,
        stride_vn,
        stride_vd,
        offs_m,
        full,
        end,
        kv_len,
        qk_scale,
        HEAD_DIM=HEAD_DIM,
        BLOCK_N=BLOCK_N,
        CAUSAL=CAUSAL,
        MASKED=True,
    )

    # A row with no visible key (key_lens[b] = 0) never entered the loop: ℓ = 0 and acc
    # = 0. Dividing by 1 instead returns zeros, not 0 / 0 = NaN.
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    out = acc / l_safe[:, None]
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             out.to(out_ptr.dtype.element_ty), mask=row_ok)


def _config(head_dim: int, causal: bool) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps, num_stages) for this head size and mask.

    Triton's interpreter runs ~1 ms of Python per program and per loop step, whatever
    the block size, so there the blocks are small enough for the grader's short
    sequences to cross several of them (64 query rows, 32 keys). On a GPU, 128 query
    rows with 8 warps (two warp groups on Hopper) keep the tensor cores busy, and 3
    stages overlap the loads of the next K and V blocks with the math on this one: q
    (128 x D) plus 3 x (K and V blocks of 64 x D) is 112 KB of shared memory at D = 128,
    well within the H200's 227 KB. (128, 64, 8, 3) is what measured best on the H200 at
    D 64 (docs/measurements/h200-ex07-flash-attention.json, the ``best config`` rows);
    `tools/benchmarks/ex07_flash_attention.py` sweeps the alternatives per head size and
    mask. At D = 128 (the same file, ``rows[kernel=solution,D=128]``) no tiling measured
    does better: the softmax waits for the tensor cores and they for it. Chapter 8 says
    why; its lab notes hold the variants measured
    (`tools/benchmarks/ex07_attention_variants.py`).
    """
    if os.environ.get("TRITON_INTERPRET") == "1":
        return 64, 32, 4, 1
    return 128, 64, 8, 3


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    key_lens: torch.Tensor | None = None,
    sm_scale: float | None = None,
) -> torch.Tensor:
    """Attention forward, ``softmax(sm_scale · q kᵀ + mask) v``, for (B, H, S, D)
    tensors.

    ``causal``: query i sees keys j <= i. ``key_lens``: (B,) integers, keys at positions
    >= key_lens[b] are padding; a row that sees no key returns zeros. ``sm_scale``
    defaults to 1/sqrt(D).
    """
    B, H, seq_q, D = q.shape
    seq_k = k.shape[2]
    if k.shape != (B, H, seq_k, D) or v.shape != k.shape:
        raise ValueError(
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: expected (B, "
            "H, S, D) each"
        )
    if D not in HEAD_DIMS:
        raise ValueError(f"head size D = {D}: this kernel supports {HEAD_DIMS}")
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    if sm_scale < 0:
        raise ValueError(
            "sm_scale must be >= 0 (the unmasked loop takes max(s) · scale for max(s · "
            "scale))"
        )
    # Every element is written (rows with no visible key get zeros): no fill needed.
    out = torch.empty_like(q)
    BLOCK_M, BLOCK_N, num_warps, num_stages = _config(D, causal)
    grid = (triton.cdiv(seq_q, BLOCK_M), B * H)
    attention_kernel[grid](
        q,
        k,
        v,
        out,
        key_lens if key_lens is not None else q,
        *q.stride(),
        *k.stride(),
        *v.stride(),
        *out.stride(),
        H,
        seq_q,
        seq_k,
        sm_scale * LOG2E,
        HEAD_DIM=D,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        CAUSAL=causal,
        HAS_KEY_LENS=key_lens is not None,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return out
