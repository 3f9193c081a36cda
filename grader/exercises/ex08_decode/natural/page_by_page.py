"""Correct, one page per loop step where the solution looks up a tile of tokens: each program looks up one block-table entry per step (a scalar
load) and reads that page's rows for its KV head; sequences are split into runs of whole pages. Every
split program writes its partials (an empty split writes m = -inf, ℓ = 0, acc = 0) and the combine
kernel merges all of them; it always runs, even for one split. Offsets are 32-bit.

On the H200 it is slower than the floor (one page of 16 tokens per step keeps too few loads in
flight): its row in docs/measurements/h200-grading-2026-12-02.json. A floor may fail a slow design;
it must not fail a right answer.
"""

import math
import os

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
INTERPRETER_NUM_SMS = 4


@triton.jit
def page_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, m_ptr, l_ptr, acc_ptr,
                stride_qb, stride_qh, stride_kp, stride_ks, stride_kh, stride_vp, stride_vs, stride_vh,
                stride_tb, pages_per_split, qk_scale,
                GROUP: tl.constexpr, ROWS: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr):
    split = tl.program_id(0)
    kv = tl.program_id(1)
    seq = tl.program_id(2)
    n = tl.load(lens_ptr + seq)
    n_pages = (n + PAGE_SIZE - 1) // PAGE_SIZE
    first = split * pages_per_split
    last = tl.minimum(first + pages_per_split, n_pages)
    g = tl.arange(0, ROWS)
    d = tl.arange(0, HEAD_DIM)
    slot = tl.arange(0, PAGE_SIZE)
    heads = kv * GROUP + g
    q = tl.load(q_ptr + seq * stride_qb + heads[:, None] * stride_qh + d[None, :], mask=(g < GROUP)[:, None],
                other=0.0)
    m = tl.full((ROWS,), float("-inf"), tl.float32)
    l = tl.zeros((ROWS,), tl.float32)
    acc = tl.zeros((ROWS, HEAD_DIM), tl.float32)
    for p in range(first, last):
        page = tl.load(table_ptr + seq * stride_tb + p)
        tok = p * PAGE_SIZE + slot
        ok = tok < n
        k = tl.load(k_ptr + page * stride_kp + slot[:, None] * stride_ks + kv * stride_kh + d[None, :],
                    mask=ok[:, None], other=0.0)
        s = tl.where(ok[None, :], tl.dot(q, tl.trans(k)) * qk_scale, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p_ = tl.math.exp2(s - m_new[:, None])
        a = tl.math.exp2(m - m_new)
        v = tl.load(v_ptr + page * stride_vp + slot[:, None] * stride_vs + kv * stride_vh + d[None, :],
                    mask=ok[:, None], other=0.0)
        l = l * a + tl.sum(p_, 1)
        acc = acc * a[:, None] + tl.dot(p_.to(v.dtype), v)
        m = m_new
    row = (seq * tl.num_programs(1) * GROUP + heads) * tl.num_programs(0) + split
    real = g < GROUP
    tl.store(m_ptr + row, m, mask=real)
    tl.store(l_ptr + row, l, mask=real)
    tl.store(acc_ptr + row[:, None] * HEAD_DIM + d[None, :], acc, mask=real[:, None])


@triton.jit
def merge_kernel(m_ptr, l_ptr, acc_ptr, out_ptr, stride_ob, stride_oh, n_splits,
                 HEAD_DIM: tl.constexpr, SPLITS: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    s = tl.arange(0, SPLITS)
    d = tl.arange(0, HEAD_DIM)
    ok = s < n_splits
    row = (seq * tl.num_programs(1) + head) * n_splits + s
    m = tl.load(m_ptr + row, mask=ok, other=float("-inf"))
    l = tl.load(l_ptr + row, mask=ok, other=0.0)
    acc = tl.load(acc_ptr + row[:, None] * HEAD_DIM + d[None, :], mask=ok[:, None], other=0.0)
    top = tl.max(m, 0)
    w = tl.math.exp2(m - tl.where(top == float("-inf"), 0.0, top))
    total = tl.sum(w * l, 0)
    o = tl.sum(w[:, None] * acc, 0) / tl.where(total == 0.0, 1.0, total)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + d, o.to(out_ptr.dtype.element_ty))


def num_splits(max_cache_len, num_seqs, num_kv_heads, num_sms, *, tile_tokens, programs_per_sm):
    tiles = (max_cache_len + tile_tokens - 1) // tile_tokens
    fit = programs_per_sm * num_sms // (num_seqs * num_kv_heads)
    return max(1, min(fit, tiles))


def decode_attention(q, k_cache, v_cache, block_table, cache_lens, sm_scale=None):
    B, H_q, D = q.shape
    _, page_size, H_kv, _ = k_cache.shape
    if q.stride(2) != 1 or k_cache.stride(3) != 1 or v_cache.stride(3) != 1 or block_table.stride(1) != 1:
        raise ValueError("the head dimension of q and the pools, and the pages of a block-table row, must be contiguous")
    scale = (1.0 / math.sqrt(D) if sm_scale is None else sm_scale) * LOG2E
    group = H_q // H_kv
    max_pages = block_table.shape[1]
    if os.environ.get("TRITON_INTERPRET") == "1" or not q.is_cuda:
        sms = INTERPRETER_NUM_SMS
    else:
        sms = torch.cuda.get_device_properties(q.device).multi_processor_count
    splits = num_splits(max_pages * page_size, B, H_kv, sms, tile_tokens=page_size, programs_per_sm=2)
    per_split = triton.cdiv(max(max_pages, 1), splits)
    splits = triton.cdiv(max(max_pages, 1), per_split)
    out = torch.empty((B, H_q, D), dtype=q.dtype, device=q.device)
    m = torch.empty((B, H_q, splits), dtype=torch.float32, device=q.device)
    l = torch.empty((B, H_q, splits), dtype=torch.float32, device=q.device)
    acc = torch.empty((B, H_q, splits, D), dtype=torch.float32, device=q.device)
    page_kernel[(splits, H_kv, B)](q, k_cache, v_cache, block_table, cache_lens, m, l, acc,
                                  q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
                                  v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), block_table.stride(0),
                                  per_split, scale, GROUP=group, ROWS=max(16, triton.next_power_of_2(group)),
                                  HEAD_DIM=D, PAGE_SIZE=page_size)
    merge_kernel[(B, H_q)](m, l, acc, out, out.stride(0), out.stride(1), splits, HEAD_DIM=D,
                           SPLITS=triton.next_power_of_2(splits))
    return out


def minimum_bytes(cache_lens, num_pages, page_size, num_q_heads, num_kv_heads, head_dim, element_size):
    kv = 2 * sum(cache_lens) * num_kv_heads * head_dim
    return (kv + 2 * len(cache_lens) * num_q_heads * head_dim) * element_size


def per_query_head_bytes(cache_lens, num_pages, page_size, num_q_heads, num_kv_heads, head_dim, element_size):
    kv = 2 * sum(cache_lens) * num_q_heads * head_dim
    return (kv + 2 * len(cache_lens) * num_q_heads * head_dim) * element_size
