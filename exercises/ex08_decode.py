"""
Exercise 8 · Decode over a paged KV cache
=========================================

In this exercise you will learn:

* why decode attention is **memory-bound**: one new query per sequence against a cache
  of S_k keys and values does about G FLOPs per byte of cache (G = H_q / H_kv query
  heads share each KV head), so its time floor is reading the cache once;
* how a **paged KV cache** works: the cache is a pool of fixed-size pages shared by
  every sequence, and a block table lists, in order, the pages of each sequence. Token t
  of sequence b lives in page ``block_table[b, t // page_size]``, slot ``t %
  page_size``;
* why one sequence cannot fill 132 SMs with one program per (sequence, KV head), and how
  **split-KV** fixes it: each program takes a chunk of one sequence's tokens and writes
  a partial (max, sum, accumulator); a second, small kernel merges the partials with
  chapter 6's merge rule;
* how to read each K/V byte **once per KV head**: the G query heads of a group sit in
  one program, as the rows of a (G, D) x (D, TILE) product.

The contract: ``q`` is (B, H_q, D); ``k_cache`` and ``v_cache`` are (num_pages,
page_size, H_kv, D) pools, fp16 or bf16; ``block_table`` is (B, max_pages) int32;
``cache_lens`` is (B,) int32 and may hold 0 (that sequence's output is zeros). Query
head h reads KV head h // (H_q / H_kv). D in {64, 128}, page_size in {16, 64}.
``sm_scale`` defaults to 1/sqrt(D). Return a new (B, H_q, D) tensor of q's dtype.

You write five things, marked TODO: ``num_splits`` and the byte model
(``minimum_bytes``, ``per_query_head_bytes``: the grader checks them on hand cases, no
GPU needed), the two kernels' bodies, and the launches. Run ``grade exercise 8``;
``grade hint 8`` gives a hint when you are stuck.
"""

import math
import os

import torch
import triton
import triton.language as tl

#: exp(x) = exp2(x · log2(e)): work in base 2, as in exercise 7.
LOG2E = 1.4426950408889634

HEAD_DIMS = (64, 128)
#: The page sizes the course grades; your kernels may work for any power of two from 16
#: up.
PAGE_SIZES = (16, 64)

#: Triton's interpreter has no SMs to count: this stand-in takes their place there, and
#: the grader assumes the same number (do not change it). With 2 programs per SM it
#: gives 8 programs per wave, so a batch of one or two sequences is split into several
#: chunks and your combine kernel runs.
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
    # TODO: program (split, kv_head, seq) = (tl.program_id(0), tl.program_id(1),
    # tl.program_id(2)) owns tokens [split * tokens_per_split, (split + 1) *
    # tokens_per_split) of sequence seq, cut at cache_lens[seq], and the G query heads
    # kv_head * G ... kv_head * G + G - 1.
    #   1. Load those G rows of q as a (GROUP_PAD, HEAD_DIM) block (the padding rows
    #      masked, other=0).
    #   2. m = -inf, l = 0 (GROUP_PAD,) and acc = 0 (GROUP_PAD, HEAD_DIM), all float32.
    #   3. For each tile of TILE tokens: look up each token's page in the block table
    #      (masked: entries past the sequence's pages may be anything), load the K rows
    #      of this KV head (page * stride_kp + (token % PAGE_SIZE) * stride_ks + kv_head
    #      * stride_kh + d * stride_kd, masked to the valid tokens, other=0), s =
    #      tl.dot(q, tl.trans(k)) * qk_scale, -inf where the token is not valid, then
    #      exercise 7's update of m, l and acc with the V rows.
    #   4. SPLIT_KV: store m, l, acc of the real heads (partial index (seq * H_q + head)
    #      * splits + split; tl.num_programs gives H_kv and splits), only if this split
    #      starts before cache_lens[seq]. Otherwise store acc / l into out (divide by 1
    #      where l == 0: an empty sequence gives zeros).
    # Triton's interpreter rejects a mask built as `block & (scalar < scalar)` ("mask
    # has unsupported dtype"): write the scalar side as a block, e.g. `start + 0 * offs
    # < cache_len`.
    pass


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
    # TODO: program (seq, head) merges the partials of the splits that hold tokens,
    # cdiv(cache_lens[seq], tokens_per_split) of them (load the others as m = -inf, l =
    # 0, acc = 0): M = max(m); w = exp2(m - M); out = sum(w * acc) / sum(w * l). A
    # sequence with no token has M = -inf: measure against 0 there, and divide by 1
    # where the sum is 0, so it stores zeros.
    pass


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
    # TODO
    raise NotImplementedError("exercise 8: write num_splits")


def _num_sms(device: torch.device) -> int:
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return INTERPRETER_NUM_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def _config(page_size: int, head_dim: int) -> tuple[int, int, int, int]:
    """(TILE, num_warps, num_stages, PROGRAMS_PER_SM) for this page size and head size.

    In Triton's interpreter (~1 ms of Python per program and per loop step) tiles of 32
    tokens: two pages of 16, or half a page of 64, so the grader's short sequences cross
    several tiles and pages. On a GPU, the same 32 tokens per step, 4 warps, splits for
    4 programs per SM, and 5 stages: the page-number loads take a pipeline stage of
    their own, so only from 5 stages on are the next tile's K and V in flight while this
    one is computed (chapter 9's lab notes, "Where the solution's time goes"). Change
    these once your kernel is correct, and measure.
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
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    group = H_q // H_kv
    # the longest a sequence can be: no sync to read cache_lens
    capacity = block_table.shape[1] * page_size
    TILE, num_warps, num_stages, per_sm = _config(page_size, D)
    out = torch.empty((B, H_q, D), dtype=q.dtype, device=q.device)
    # TODO:
    #   1. splits = num_splits(capacity, B, H_kv, _num_sms(q.device), tile_tokens=TILE,
    #      programs_per_sm=per_sm); round each split up to whole tiles
    #      (tokens_per_split, a multiple of TILE) and drop the splits that rounding
    #      leaves without a tile.
    #   2. With more than one split: allocate the partials with torch.empty (float32: m
    #      and l of shape (B, H_q, splits), acc of shape (B, H_q, splits, D)), launch
    #      decode_split_kernel on the grid (splits, H_kv, B) with SPLIT_KV=True, then
    #      decode_combine_kernel on (B, H_q). With one split: launch decode_split_kernel
    #      with SPLIT_KV=False (pass `out` for the partials).
    #   Pass every stride (`*q.stride()`, `*k_cache.stride()`, ...), sm_scale * LOG2E,
    #   GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), and num_warps /
    #   num_stages from _config.
    # Then delete the line below.
    raise NotImplementedError(
        "exercise 8: write the kernels and launch them from decode_attention()"
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
    """Fewest bytes one decode step can move for sequences of these lengths over this
    pool.

    ``cache_lens`` lists each sequence's valid tokens; the pool has ``num_pages`` pages
    of ``page_size`` tokens. Decide which of these numbers the minimum depends on.
    """
    # TODO: which rows of K and V does attention need, how many times, and what else is
    # read or written?
    raise NotImplementedError(
        "exercise 8: count the bytes of one decode step in minimum_bytes()"
    )


def per_query_head_bytes(
    cache_lens: list[int],
    num_pages: int,
    page_size: int,
    num_q_heads: int,
    num_kv_heads: int,
    head_dim: int,
    element_size: int,
) -> int:
    """Bytes a schedule with one program per (sequence, query head) moves, each program
    reading its KV head's rows on its own."""
    # TODO
    raise NotImplementedError(
        "exercise 8: count the bytes of a per-query-head schedule in "
        "per_query_head_bytes()"
    )
