"""Wrong: a first kernel writes every score to memory, a second one reads them back.

Everything is computed by Triton kernels and the answer is right, but the (B, H_q, S) scores make a
round trip through memory: the intermediate a fused decode kernel keeps in registers.
"""

import math

import torch
import triton
import triton.language as tl

from solutions.ex08_decode import minimum_bytes, num_splits, per_query_head_bytes  # noqa: F401  (not the mistake)

EXPECTED = "the scores went to memory"
SELECT = "no_scores_in_memory"

TILE = 32


@triton.jit
def scores_kernel(q_ptr, k_ptr, table_ptr, lens_ptr, s_ptr, stride_qb, stride_qh, stride_kp, stride_ks,
                  stride_kh, stride_tb, capacity, qk_scale, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr,
                  PAGE_SIZE: tl.constexpr, TILE: tl.constexpr):
    # One tile of scores of one (sequence, query head), stored: the mistake.
    tile = tl.program_id(0)
    head = tl.program_id(1)
    seq = tl.program_id(2)
    n = tl.load(lens_ptr + seq)
    tokens = tile * TILE + tl.arange(0, TILE)
    valid = tokens < n
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + seq * stride_qb + head * stride_qh + offs_d).to(tl.float32)
    pages = tl.load(table_ptr + seq * stride_tb + tokens // PAGE_SIZE, mask=valid, other=0)
    k = tl.load(k_ptr + pages[:, None] * stride_kp + (tokens % PAGE_SIZE)[:, None] * stride_ks
                + (head // GROUP) * stride_kh + offs_d[None, :], mask=valid[:, None], other=0.0).to(tl.float32)
    s = tl.where(valid, tl.sum(k * q[None, :], 1) * qk_scale, float("-inf"))
    tl.store(s_ptr + (seq * tl.num_programs(1) + head) * capacity + tokens, s, mask=tokens < capacity)


@triton.jit
def softmax_pv_kernel(s_ptr, v_ptr, table_ptr, lens_ptr, out_ptr, stride_vp, stride_vs, stride_vh, stride_tb,
                      stride_ob, stride_oh, capacity, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr,
                      PAGE_SIZE: tl.constexpr, TILE: tl.constexpr):
    head = tl.program_id(0)
    seq = tl.program_id(1)
    n = tl.load(lens_ptr + seq)
    row = s_ptr + (seq * tl.num_programs(0) + head) * capacity
    offs_d = tl.arange(0, HEAD_DIM)
    m = float("-inf")
    for start in range(0, n, TILE):
        tokens = start + tl.arange(0, TILE)
        m = tl.maximum(m, tl.max(tl.load(row + tokens, mask=tokens < n, other=float("-inf")), 0))
    total = 0.0
    acc = tl.zeros((HEAD_DIM,), dtype=tl.float32)
    for start in range(0, n, TILE):
        tokens = start + tl.arange(0, TILE)
        valid = tokens < n
        p = tl.exp(tl.load(row + tokens, mask=valid, other=float("-inf")) - m)
        pages = tl.load(table_ptr + seq * stride_tb + tokens // PAGE_SIZE, mask=valid, other=0)
        v = tl.load(v_ptr + pages[:, None] * stride_vp + (tokens % PAGE_SIZE)[:, None] * stride_vs
                    + (head // GROUP) * stride_vh + offs_d[None, :], mask=valid[:, None], other=0.0).to(tl.float32)
        total += tl.sum(p, 0)
        acc += tl.sum(p[:, None] * v, 0)
    out = acc / tl.where(total == 0.0, 1.0, total)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + offs_d, out.to(out_ptr.dtype.element_ty))


def decode_attention(q, k_cache, v_cache, block_table, cache_lens, sm_scale=None):
    B, H_q, D = q.shape
    num_pages, page_size, H_kv, _ = k_cache.shape
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    capacity = block_table.shape[1] * page_size
    out = torch.empty((B, H_q, D), dtype=q.dtype, device=q.device)
    scores = torch.empty((B, H_q, capacity), dtype=torch.float32, device=q.device)
    scores_kernel[(triton.cdiv(capacity, TILE), H_q, B)](
        q, k_cache, block_table, cache_lens, scores, q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        k_cache.stride(2), block_table.stride(0), capacity, sm_scale, GROUP=H_q // H_kv, HEAD_DIM=D,
        PAGE_SIZE=page_size, TILE=TILE)
    softmax_pv_kernel[(H_q, B)](
        scores, v_cache, block_table, cache_lens, out, v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        block_table.stride(0), out.stride(0), out.stride(1), capacity, GROUP=H_q // H_kv, HEAD_DIM=D,
        PAGE_SIZE=page_size, TILE=TILE)
    return out
