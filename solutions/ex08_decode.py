"""
Exercise 8 · Decode over a paged KV cache — reference solution
==============================================================

In this exercise you will learn:

* why decode attention is **memory-bound**: one new query per sequence against a cache
  of S_k keys and values does about G FLOPs per byte of cache (G = H_q / H_kv query
  heads share each KV head), so its time floor is reading the cache once;
* how a **paged KV cache** works: the cache is a pool of fixed-size pages shared by
  every sequence, and a block table lists, in order, the pages of each sequence. Token t
  of sequence b lives in page ``block_table[b, t // page_size]``, slot ``t %
  page_size``: one indirection per page;
* why one sequence cannot fill 132 SMs with one program per (sequence, KV head), and how
  **split-KV** fixes it: each program takes a chunk of one sequence's pages and writes a
  partial (max, sum, accumulator); a second, small kernel merges the partials with the
  online-softmax rule of exercise 5 (chapter 6's merge);
* how to read each K/V byte **once per KV head**: the G query heads of a group sit in
  one program, as the rows of a (G, D) x (D, TILE) product on the tensor cores.

Layout: ``decode_split_kernel`` runs on a grid of (splits, H_kv, B) programs. Program
(s, h, b) owns tokens [s · tokens_per_split, (s + 1) · tokens_per_split) of sequence b,
cut at ``cache_lens[b]``, and the query heads h · G ... h · G + G - 1. It walks its
tokens in tiles of TILE tokens (whole pages when TILE >= page_size), gathering each
tile's rows of K and V through the block table, and keeps the running max m, sum ℓ and
accumulator acc of exercise 7 for its G heads. With more than one split it stores (m, ℓ,
acc) per head and split; ``decode_combine_kernel`` (one program per sequence and query
head) merges them. With one split there is nothing to merge: the split kernel divides by
ℓ and writes ``out`` itself, and the second launch is skipped.

Numbers: ``python -m tools.benchmarks ex08_decode`` measures this kernel against
PyTorch's SDPA on the gathered cache, a per-(sequence, query head) Triton kernel and
FlashInfer's paged decode kernel (docs/measurements/h200-ex08-decode.json).
"""

import math
import os

import torch
import triton
import triton.language as tl

#: exp(x) = exp2(x · log2(e)): the kernels work in base 2 (exercise 7).
LOG2E = 1.4426950408889634

HEAD_DIMS = (64, 128)
#: The page sizes the course grades; the kernels work for any power of two from 16 up.
PAGE_SIZES = (16, 64)

#: Triton's interpreter has no SMs to count: this stand-in takes their place there (the
#: grader assumes the same number). With PROGRAMS_PER_SM = 2 it gives 8 programs per
#: wave, so a batch of one or two sequences is split into several chunks and the combine
#: kernel runs.
INTERPRETER_NUM_SMS = 4


@triton.jit
def decode_split_kernel(
    q_ptr,  # pointer to the queries, (B, H_q, D)
    k_cache_ptr,  # pointer to the key pool, (num_pages, page_size, H_kv, D)
    v_cache_ptr,  # pointer to the value pool, (num_pages, page_size, H_kv, D)
    # pointer to the (B, max_pages) int32 page indices of each sequence, in order
    block_table_ptr,
    cache_lens_ptr,  # pointer to the (B,) int32 valid tokens of each sequence
    # pointer to the output, (B, H_q, D); written here only when SPLIT_KV is False
    out_ptr,
    # pointer to the (B, H_q, splits) float32 partial maxima (SPLIT_KV only)
    part_m_ptr,
    part_l_ptr,  # pointer to the (B, H_q, splits) float32 partial sums (SPLIT_KV only)
    # pointer to the (B, H_q, splits, D) float32 partial accumulators (SPLIT_KV only)
    part_acc_ptr,
    stride_qb, stride_qh, stride_qd,  # query strides: sequence, head, head-dim element
    # key pool strides: page, slot in the page, KV head, element
    stride_kp, stride_ks, stride_kh, stride_kd,
    stride_vp, stride_vs, stride_vh, stride_vd,  # value pool strides
    stride_tb, stride_tp,  # block table strides: sequence, page
    stride_ob, stride_oh, stride_od,  # output strides
    tokens_per_split,  # tokens each split owns: a multiple of TILE
    qk_scale,  # sm_scale · log2(e): scores in base 2
    GROUP: tl.constexpr,  # G = H_q / H_kv: query heads per KV head
    # G rounded up to a power of two >= 16 (tl.dot needs 16 rows)
    GROUP_PAD: tl.constexpr,
    HEAD_DIM: tl.constexpr,  # D: 64 or 128
    PAGE_SIZE: tl.constexpr,  # tokens per page: a power of two
    # tokens per loop step: a power of two (several pages, or part of one)
    TILE: tl.constexpr,
    # True: store partials for the combine kernel; False: one split, store out
    SPLIT_KV: tl.constexpr,
):
    split = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq = tl.program_id(2)
    num_splits = tl.num_programs(0)
    num_q_heads = tl.num_programs(1) * GROUP

    cache_len = tl.load(cache_lens_ptr + seq)
    start = split * tokens_per_split
    # empty (start >= end) past the sequence's end
    end = tl.minimum(start + tokens_per_split, cache_len)

    offs_g = tl.arange(0, GROUP_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, TILE)
    # query head h reads KV head h // G: this program's G heads
    heads = kv_head * GROUP + offs_g
    head_ok = offs_g < GROUP  # the padding rows are zeros, computed and never stored
    # The G query heads of the group, loaded once. Rows past G are 0: their scores are
    # 0, harmless.
    q = tl.load(
        q_ptr
        + seq * stride_qb
        + heads[:, None] * stride_qh
        + offs_d[None, :] * stride_qd,
        mask=head_ok[:, None],
        other=0.0,
    )

    m_i = tl.full((GROUP_PAD,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((GROUP_PAD,), dtype=tl.float32)
    acc = tl.zeros((GROUP_PAD, HEAD_DIM), dtype=tl.float32)
    # 64-bit offsets: a pool of num_pages · page_size · H_kv · D elements passes 2^31 in
    # real servers.
    k_head = k_cache_ptr + kv_head.to(tl.int64) * stride_kh
    v_head = v_cache_ptr + kv_head.to(tl.int64) * stride_vh
    table = block_table_ptr + seq.to(tl.int64) * stride_tb

    for tile_start in range(start, end, TILE):
        tokens = tile_start + offs_t
        valid = tokens < end
        # The indirection: which page holds each token of the tile, and which slot in
        # it. Tokens past the end are not even looked up (their block-table entries may
        # be anything).
        pages = tl.load(
            table + (tokens // PAGE_SIZE) * stride_tp, mask=valid, other=0
        ).to(tl.int64)
        slots = tokens % PAGE_SIZE
        # Each row is D contiguous elements (one token, one KV head): wide, vectorized
        # loads. Masked: the slots of the last page past cache_len hold anything, NaN
        # included, and 0 · NaN = NaN.
        k = tl.load(
            k_head
            + pages[:, None] * stride_kp
            + slots[:, None] * stride_ks
            + offs_d[None, :] * stride_kd,
            mask=valid[:, None],
            other=0.0,
        )
        # (GROUP_PAD, D) x (D, TILE): the scores of all G heads from one read of this K
        # tile.
        s = tl.dot(q, tl.trans(k))
        # before the max (exercise 7)
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        # The first tile holds a valid token (start < end), so m_new is finite from the
        # first step: no exp2(-inf - (-inf)).
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(
            v_head
            + pages[:, None] * stride_vp
            + slots[:, None] * stride_vs
            + offs_d[None, :] * stride_vd,
            mask=valid[:, None],
            other=0.0,
        )
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    if SPLIT_KV:
        # Partials of this split, one row per query head: (m, ℓ, acc), unnormalized. A
        # split that starts past the sequence's end stores nothing: the combine kernel
        # reads only the splits that have tokens, cdiv(cache_len, tokens_per_split) of
        # them.
        row = (seq * num_q_heads + heads) * num_splits + split
        # (`start + 0 * offs_g`: a block, not a scalar comparison; Triton's interpreter
        # rejects a mask made of a block `&` a scalar comparison with "mask has
        # unsupported dtype", a GPU does not.)
        keep = head_ok & (start + 0 * offs_g < cache_len)
        tl.store(part_m_ptr + row, m_i, mask=keep)
        tl.store(part_l_ptr + row, l_i, mask=keep)
        tl.store(
            part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :],
            acc,
            mask=keep[:, None],
        )
    else:
        # One split: this program saw every token of the sequence. ℓ = 0 only for
        # cache_len = 0, where acc = 0 too: divide by 1 and store zeros, not 0 / 0 =
        # NaN.
        l_safe = tl.where(l_i == 0.0, 1.0, l_i)
        out = acc / l_safe[:, None]
        tl.store(
            out_ptr
            + seq * stride_ob
            + heads[:, None] * stride_oh
            + offs_d[None, :] * stride_od,
            out.to(out_ptr.dtype.element_ty),
            mask=head_ok[:, None],
        )


@triton.jit
def decode_combine_kernel(
    part_m_ptr,  # pointer to the (B, H_q, splits) float32 partial maxima (base 2)
    part_l_ptr,  # pointer to the (B, H_q, splits) float32 partial sums
    part_acc_ptr,  # pointer to the (B, H_q, splits, D) float32 partial accumulators
    cache_lens_ptr,  # pointer to the (B,) int32 valid tokens of each sequence
    out_ptr,  # pointer to the output, (B, H_q, D)
    stride_ob, stride_oh, stride_od,  # output strides
    tokens_per_split,  # tokens each split owns (as in decode_split_kernel)
    num_splits,  # splits per sequence: the last dimension of part_m
    HEAD_DIM: tl.constexpr,  # D
    SPLITS_PAD: tl.constexpr,  # num_splits rounded up to a power of two
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    num_q_heads = tl.num_programs(1)
    cache_len = tl.load(cache_lens_ptr + seq)
    # splits that hold tokens
    n_valid = (cache_len + tokens_per_split - 1) // tokens_per_split
    offs_s = tl.arange(0, SPLITS_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    ok = offs_s < n_valid
    row = (seq * num_q_heads + head) * num_splits + offs_s
    m = tl.load(part_m_ptr + row, mask=ok, other=float("-inf"))
    l = tl.load(part_l_ptr + row, mask=ok, other=0.0)
    acc = tl.load(
        part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :],
        mask=ok[:, None],
        other=0.0,
    )
    # The merge rule (chapter 6): every partial is rescaled to the common max before
    # adding.
    m_all = tl.max(m, 0)
    # cache_len = 0: no split has a token, m_all = -inf; measure against 0 so exp2(-inf
    # - 0) = 0 and the output is 0 / 1 = 0, not exp2(-inf - (-inf)) = NaN.
    m_ref = tl.where(m_all == float("-inf"), 0.0, m_all)
    w = tl.math.exp2(m - m_ref)
    total = tl.sum(w * l, 0)
    out = tl.sum(w[:, None] * acc, 0) / tl.where(total == 0.0, 1.0, total)
    tl.store(
        out_ptr + seq * stride_ob + head * stride_oh + offs_d * stride_od,
        out.to(out_ptr.dtype.element_ty),
    )


def num_splits(
    max_cache_len: int,
    num_seqs: int,
    num_kv_heads: int,
    num_sms: int,
    *,
    tile_tokens: int,
    programs_per_sm: int,
) -> int:
    """How many chunks to split each sequence's tokens into, so that the split kernel
    fills the GPU.

    One wave holds ``programs_per_sm * num_sms`` programs; (sequence, KV head) pairs
    alone give ``num_seqs * num_kv_heads``. As many splits as fit in one wave (rounded
    down: one program more would start a second, nearly empty wave), at least 1 (the
    pairs alone fill the GPU), and never more than the tiles of the longest sequence (a
    split with no tile does nothing).
    """
    tiles = -(-max_cache_len // tile_tokens)
    per_wave = (programs_per_sm * num_sms) // (num_seqs * num_kv_heads)
    return max(1, min(per_wave, tiles))


def _num_sms(device: torch.device) -> int:
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return INTERPRETER_NUM_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def _config(page_size: int, head_dim: int) -> tuple[int, int, int, int]:
    """(TILE, num_warps, num_stages, PROGRAMS_PER_SM) for this page size and head size.

    In Triton's interpreter (~1 ms of Python per program and per loop step) tiles of 32
    tokens: two pages of 16, or half a page of 64, so the grader's short sequences cross
    several tiles and pages. On a GPU, the same 32 tokens per step (8 KiB of K and 8 KiB
    of V at D = 128 in bf16), 4 warps, splits sized for 4 programs per SM, and
    num_stages = 5. Why 5: the K and V addresses wait for a block-table load, and
    Triton's software pipeliner gives that indirection a stage of its own, so the ring
    of K/V buffers has one slot at num_stages 2 to 4 (load, wait, compute: nothing in
    flight while a tile is used), two at 5 and 6, three at 7 and 8 (read off the
    compiled TTGIR with Triton 3.6 and 3.9). Two slots let the next tile's loads run
    while this one is computed. Measured on the H200, replayed from CUDA graphs after a
    read flush (docs/measurements/h200-ex08-decode-configs.json, the ``pipeline-sweep``,
    ``occupancy-sweep``, ``warps-sweep``, ``wgmma-sweep`` and ``waves-sweep`` rows, with
    each configuration's registers and shared memory; ``tools/device/decode_probe.py``):
    this was the fastest at one and eight sequences and level with the rest at 64; three
    slots, larger tiles, more warps, and more programs per SM (register caps of 64 and
    96, or two warps a program) were all slower, and so were the next tile loaded into
    registers by hand instead of the pipeliner's ring, the products turned around so
    that wgmma reads K and V from shared memory (with TMA copies for pages of 64),
    splits for more than one wave, and work handed out at run time.
    """
    if os.environ.get("TRITON_INTERPRET") == "1":
        return 32, 4, 1, 2
    return 32, 4, 5, 4


def decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_lens: torch.Tensor,
    sm_scale: float | None = None,
) -> torch.Tensor:
    """One decode step of attention over a paged KV cache.

    ``q``: (B, H_q, D), the new token's query heads. ``k_cache``, ``v_cache``:
    (num_pages, page_size, H_kv, D) pools shared by every sequence. ``block_table``: (B,
    max_pages) int32, the pages of each sequence in order. ``cache_lens``: (B,) int32,
    the valid tokens of each sequence (0 gives zeros). Query head h reads KV head h //
    (H_q / H_kv). Returns (B, H_q, D) in q's dtype.
    """
    B, H_q, D = q.shape
    num_pages, page_size, H_kv, D_kv = k_cache.shape
    if v_cache.shape != k_cache.shape or D_kv != D:
        raise ValueError(
            f"q {tuple(q.shape)}, k_cache {tuple(k_cache.shape)}, v_cache "
            f"{tuple(v_cache.shape)}: "
            "expected (B, H_q, D) and two (num_pages, page_size, H_kv, D) pools"
        )
    if D not in HEAD_DIMS:
        raise ValueError(f"head size D = {D}: this kernel supports {HEAD_DIMS}")
    if H_q % H_kv:
        raise ValueError(f"H_q = {H_q} is not a multiple of H_kv = {H_kv}")
    if page_size < 16 or page_size & (page_size - 1):
        raise ValueError(
            f"page_size = {page_size}: a power of two >= 16 (the course uses "
            f"{PAGE_SIZES})"
        )
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    group = H_q // H_kv
    # the longest a sequence can be: no sync to read cache_lens
    capacity = block_table.shape[1] * page_size
    TILE, num_warps, num_stages, per_sm = _config(page_size, D)
    splits = num_splits(
        capacity, B, H_kv, _num_sms(q.device), tile_tokens=TILE, programs_per_sm=per_sm
    )
    # Whole tiles per split; then drop the splits that rounding left without a tile.
    tiles = max(1, triton.cdiv(capacity, TILE))
    tiles_per_split = triton.cdiv(tiles, splits)
    splits = triton.cdiv(tiles, tiles_per_split)
    tokens_per_split = tiles_per_split * TILE

    # Every element is written (a sequence with no token gets zeros): no fill needed.
    out = torch.empty((B, H_q, D), dtype=q.dtype, device=q.device)
    split_kv = splits > 1
    if split_kv:
        part_m = torch.empty((B, H_q, splits), dtype=torch.float32, device=q.device)
        part_l = torch.empty((B, H_q, splits), dtype=torch.float32, device=q.device)
        part_acc = torch.empty(
            (B, H_q, splits, D), dtype=torch.float32, device=q.device
        )
    else:
        part_m = part_l = part_acc = out  # not read: SPLIT_KV=False stores out directly
    decode_split_kernel[(splits, H_kv, B)](
        q,
        k_cache,
        v_cache,
        block_table,
        cache_lens,
        out,
        part_m,
        part_l,
        part_acc,
        *q.stride(),
        *k_cache.stride(),
        *v_cache.stride(),
        *block_table.stride(),
        *out.stride(),
        tokens_per_split,
        sm_scale * LOG2E,
        GROUP=group,
        GROUP_PAD=max(16, triton.next_power_of_2(group)),
        HEAD_DIM=D,
        PAGE_SIZE=page_size,
        TILE=TILE,
        SPLIT_KV=split_kv,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    if split_kv:
        decode_combine_kernel[(B, H_q)](
            part_m,
            part_l,
            part_acc,
            cache_lens,
            out,
            *out.stride(),
            tokens_per_split,
            splits,
            HEAD_DIM=D,
            SPLITS_PAD=triton.next_power_of_2(splits),
            num_warps=4,
        )
    return out


# --- the byte model
# ----------------------------------------------------------------------------


def minimum_bytes(
    cache_lens: list[int],
    num_pages: int,
    page_size: int,
    num_q_heads: int,
    num_kv_heads: int,
    head_dim: int,
    element_size: int,
) -> int:
    """Fewest bytes one decode step can move: every valid K and V row once, q read, out
    written.

    A valid token is one below its sequence's cache length: that is what attention
    needs, whatever the pool holds around it, so neither ``num_pages`` (the whole pool)
    nor ``page_size`` (the unused tail of each last page) enters. The block table (4
    bytes per page, against 2 · page_size · H_kv · D elements of K and V per page) is
    left out.
    """
    tokens = sum(cache_lens)
    return (
        2 * tokens * num_kv_heads * head_dim
        + 2 * len(cache_lens) * num_q_heads * head_dim
    ) * element_size


def per_query_head_bytes(
    cache_lens: list[int],
    num_pages: int,
    page_size: int,
    num_q_heads: int,
    num_kv_heads: int,
    head_dim: int,
    element_size: int,
) -> int:
    """Bytes a schedule with one program per (sequence, query head) moves: each of the G
    query heads of a group reads its KV head's rows on its own, so K and V are read H_q
    times per token, not H_kv."""
    tokens = sum(cache_lens)
    return (
        2 * tokens * num_q_heads * head_dim
        + 2 * len(cache_lens) * num_q_heads * head_dim
    ) * element_size
