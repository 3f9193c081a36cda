"""Exercise 8's split-KV decode over its launch configurations and three ways to merge the splits, timed
the way a server runs it: replayed from a CUDA graph after a read flush (``grader.bandwidth.time_ms_clean_l2``),
beside a plain Triton read of the same bytes (one 8 KiB block per program).

    PYTHONPATH=. python tools/device/decode_probe.py [--part pipeline|merge|occupancy|warps|wgmma|waves]   # $OUT/decode_probe.json

About 40-80 s a part on an H200 (set GRADE_CACHE_DIR where platformdirs is not installed). The rows of
docs/measurements/h200-ex08-decode-configs.json whose ``part`` starts with ``pipeline``, ``merge``,
``occupancy``, ``warps``, ``wgmma`` and ``waves`` came from these six parts (the ``pipeline`` run did
not yet time in a graph).

A configuration is (TILE, num_warps, num_stages, programs per SM the splits are sized for). Why
num_stages matters here: the K and V loads depend on a block-table load, and Triton's pipeliner gives
that indirection a stage of its own, so the K/V ring has one buffer at num_stages 2-4 (load, wait,
compute: no overlap inside a program), two at 5-6 and three at 7-8 (read off the compiled TTGIR,
Triton 3.6 and 3.9, ``tools/benchmarks/sm90_resources.py``).

Merges (``mode``):
  ``two-launch``  the split kernel, then the combine kernel (the solution's shape);
  ``split-only``  the split kernel alone (what the merge costs is the difference);
  ``pdl``         the combine launched as a programmatic dependent launch: its programs start while the
                  split kernel drains and wait on ``griddepcontrol.wait``;
  ``ticket``      one launch: each split program takes a ticket from a per-(sequence, KV head) counter
                  after storing its partials, and the last one merges them (the counter is reset by it).
A configuration ("pf", TILE, num_warps, programs per SM) runs ``split_prefetch_kernel``: num_stages 1, the
next tile's rows loaded into registers before this tile is computed (``warps`` part). ("t" | "tma", TILE,
num_warps, num_stages, programs per SM) runs ``split_transposed_kernel``, the tokens as the rows of both
products so that they are wgmma reading K and V from shared memory, gathered by pointer loads or one TMA
copy per page (``wgmma`` part). ("dyn", TILE, num_warps, num_stages, programs per SM, C) runs
``split_dynamic_kernel``: the work handed out at run time, C tiles at a time (``waves`` part).
Prefixes: ``cap-`` bounds the loop by the block table's width and masks by ``cache_lens`` inside, so the
first page is asked for in parallel with ``cache_lens`` rather than after it; ``cap-nolen-`` also has
every split store its partials (an empty one stores (-inf, 0, 0)), so the combine reads no ``cache_lens``.

Beside the decode: ``pattern-hH-table|inorder-pP`` reads decode's K and V rows with no arithmetic (H KV
heads per program, through the block table or pages in order, splits for P programs per SM), and
``bdH-...`` is a decode kernel with H KV heads per program, their query rows block-diagonal in one dot.
Every row is timed twice: replayed from a CUDA graph after a read flush (``fraction``) and as a node of
a 16-step graph (``fraction_in_graph``, ``grader.bandwidth.time_ms_in_graph``).
"""
import itertools
import json
import math
import os
import statistics
import time

import torch
import triton
import triton.language as tl

from grader import bandwidth
from tools.benchmarks.ex08_decode import nbytes, paged_inputs, read_kernel
from grader.exercises.ex08_decode.spec import reference
from solutions import ex08_decode as sol

OUT = os.environ.get("OUT", ".")
H_Q, H_KV, D = 32, 8, 128

try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - older Triton
    TensorDescriptor = None
try:
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:  # pragma: no cover - older Triton
    gdc_launch_dependents = gdc_wait = None


@triton.jit
def empty_kernel(x_ptr):
    pass


@triton.jit
def online_step(s, valid, v, m_i, l_i, acc, qk_scale, SAFE_MAX: tl.constexpr):
    """One tile of exercise 7's online softmax: scores ``s`` (rows, TILE), masked by ``valid``, folded with
    ``v`` into (m, l, acc). SAFE_MAX: a tile with no valid token can come first (measure against 0)."""
    s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    if SAFE_MAX:
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
    else:
        m_use = m_new
    p = tl.math.exp2(s - m_use[:, None])
    alpha = tl.math.exp2(m_i - m_use)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return m_new, l_i, acc


@triton.jit
def store_result(m_i, l_i, acc, heads, keep, out_ptr, part_m_ptr, part_l_ptr, part_acc_ptr, stride_ob, stride_oh,
                 num_q_heads, HEAD_DIM: tl.constexpr, SPLIT_KV: tl.constexpr):
    """The solution's epilogue: with splits, (m, l, acc) per query head where ``keep``; with one split,
    acc / l (zeros for an empty sequence) for the G heads (``keep`` is then head_ok)."""
    split = tl.program_id(0)
    seq = tl.program_id(2)
    offs_d = tl.arange(0, HEAD_DIM)
    if SPLIT_KV:
        row = (seq * num_q_heads + heads) * tl.num_programs(0) + split
        tl.store(part_m_ptr + row, m_i, mask=keep)
        tl.store(part_l_ptr + row, l_i, mask=keep)
        tl.store(part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], acc, mask=keep[:, None])
    else:
        l_safe = tl.where(l_i == 0.0, 1.0, l_i)
        tl.store(out_ptr + seq * stride_ob + heads[:, None] * stride_oh + offs_d[None, :],
                 (acc / l_safe[:, None]).to(out_ptr.dtype.element_ty), mask=keep[:, None])


@triton.jit
def split_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, cache_lens_ptr, out_ptr,
                 part_m_ptr, part_l_ptr, part_acc_ptr, count_ptr,
                 stride_qb, stride_qh, stride_kp, stride_ks, stride_kh, stride_vp, stride_vs, stride_vh,
                 stride_tb, stride_ob, stride_oh, tokens_per_split, capacity, qk_scale,
                 GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr,
                 TILE: tl.constexpr, SPLIT_KV: tl.constexpr, PDL: tl.constexpr, TICKET: tl.constexpr,
                 SPLITS_PAD: tl.constexpr, LOOP_BY_CAPACITY: tl.constexpr, EMPTY_PARTIALS: tl.constexpr):
    # The solution's split kernel (unit inner strides), plus the PDL and TICKET merges.
    if PDL:
        gdc_launch_dependents()
    split = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq = tl.program_id(2)
    num_splits = tl.num_programs(0)
    num_kv = tl.num_programs(1)
    num_q_heads = num_kv * GROUP
    cache_len = tl.load(cache_lens_ptr + seq)
    start = split * tokens_per_split
    end = tl.minimum(start + tokens_per_split, cache_len)
    offs_g = tl.arange(0, GROUP_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, TILE)
    heads = kv_head * GROUP + offs_g
    head_ok = offs_g < GROUP
    q = tl.load(q_ptr + seq * stride_qb + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    m_i = tl.full((GROUP_PAD,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((GROUP_PAD,), dtype=tl.float32)
    acc = tl.zeros((GROUP_PAD, HEAD_DIM), dtype=tl.float32)
    k_head = k_cache_ptr + kv_head.to(tl.int64) * stride_kh
    v_head = v_cache_ptr + kv_head.to(tl.int64) * stride_vh
    table = block_table_ptr + seq.to(tl.int64) * stride_tb
    if LOOP_BY_CAPACITY:
        # The loop's bounds and the block-table loads need no cache_len: the first page is asked for
        # at once, in parallel with cache_len, not after it (one dependent memory latency fewer).
        loop_end = tl.minimum(start + tokens_per_split, capacity)
    else:
        loop_end = end
    for tile_start in range(start, loop_end, TILE):
        tokens = tile_start + offs_t
        valid = tokens < end
        if LOOP_BY_CAPACITY:
            pages = tl.load(table + tokens // PAGE_SIZE, mask=tokens < loop_end, other=0).to(tl.int64)
        else:
            pages = tl.load(table + tokens // PAGE_SIZE, mask=valid, other=0).to(tl.int64)
        slots = tokens % PAGE_SIZE
        k = tl.load(k_head + pages[:, None] * stride_kp + slots[:, None] * stride_ks + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        v = tl.load(v_head + pages[:, None] * stride_vp + slots[:, None] * stride_vs + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        # LOOP_BY_CAPACITY: a tile past cache_len can come first, so no exp2(-inf - (-inf)).
        m_i, l_i, acc = online_step(tl.dot(q, tl.trans(k)), valid, v, m_i, l_i, acc, qk_scale, LOOP_BY_CAPACITY)
    if SPLIT_KV:
        if EMPTY_PARTIALS:
            keep = head_ok  # an empty split stores (-inf, 0, 0): the combine needs no cache_len
        else:
            keep = head_ok & (start + 0 * offs_g < cache_len)
        store_result(m_i, l_i, acc, heads, keep, out_ptr, part_m_ptr, part_l_ptr, part_acc_ptr, stride_ob, stride_oh,
                     num_q_heads, HEAD_DIM, True)
        if TICKET:
            n_valid = (cache_len + tokens_per_split - 1) // tokens_per_split
            if start < cache_len:
                tl.debug_barrier()  # every thread's partial stores before the ticket
                counter = count_ptr + seq * num_kv + kv_head
                ticket = tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
                if ticket == n_valid - 1:
                    offs_s = tl.arange(0, SPLITS_PAD)
                    ok = offs_s < n_valid
                    for g in range(GROUP):  # a loop, not unrolled: the merge must not raise the registers
                        prow = (seq * num_q_heads + kv_head * GROUP + g) * num_splits + offs_s
                        pm = tl.load(part_m_ptr + prow, mask=ok, other=float("-inf"), cache_modifier=".cg")
                        pl = tl.load(part_l_ptr + prow, mask=ok, other=0.0, cache_modifier=".cg")
                        w = tl.math.exp2(pm - tl.max(pm, 0))
                        inv = 1.0 / tl.sum(w * pl, 0)
                        for c in tl.static_range(HEAD_DIM // 32):  # 32 columns at a time: 16 registers
                            offs_c = c * 32 + tl.arange(0, 32)
                            pacc = tl.load(part_acc_ptr + prow[:, None] * HEAD_DIM + offs_c[None, :], mask=ok[:, None],
                                           other=0.0, cache_modifier=".cg")
                            o = tl.sum(w[:, None] * pacc, 0) * inv
                            tl.store(out_ptr + seq * stride_ob + (kv_head * GROUP + g) * stride_oh + offs_c,
                                     o.to(out_ptr.dtype.element_ty))
                    tl.atomic_xchg(counter, 0)
            if (cache_len == 0) & (split == 0):  # no ticket is taken: split 0 writes the zeros
                tl.store(out_ptr + seq * stride_ob + heads[:, None] * stride_oh + offs_d[None, :],
                         tl.zeros((GROUP_PAD, HEAD_DIM), tl.float32).to(out_ptr.dtype.element_ty), mask=head_ok[:, None])
    else:
        store_result(m_i, l_i, acc, heads, head_ok, out_ptr, part_m_ptr, part_l_ptr, part_acc_ptr, stride_ob, stride_oh,
                     num_q_heads, HEAD_DIM, False)


@triton.jit
def split_prefetch_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, cache_lens_ptr, out_ptr,
                          part_m_ptr, part_l_ptr, part_acc_ptr,
                          stride_qb, stride_qh, stride_kp, stride_ks, stride_kh, stride_vp, stride_vs, stride_vh,
                          stride_tb, stride_ob, stride_oh, tokens_per_split, qk_scale,
                          GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr,
                          PAGE_SIZE: tl.constexpr, TILE: tl.constexpr, SPLIT_KV: tl.constexpr):
    # The split kernel with its prefetch written out, for num_stages=1 (no cp.async ring): the K and
    # V rows of the next tile are loaded into registers before this tile is computed, and the block-table
    # entries two tiles ahead, so neither the table's latency nor the rows' sits between two tiles.
    # The prologue is split_kernel's, written out again: through a shared helper the compiled code is not
    # byte for byte the one that was measured (the epilogue, store_result, is).
    split = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq = tl.program_id(2)
    num_q_heads = tl.num_programs(1) * GROUP
    cache_len = tl.load(cache_lens_ptr + seq)
    start = split * tokens_per_split
    end = tl.minimum(start + tokens_per_split, cache_len)
    offs_g = tl.arange(0, GROUP_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, TILE)
    heads = kv_head * GROUP + offs_g
    head_ok = offs_g < GROUP
    q = tl.load(q_ptr + seq * stride_qb + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    m_i = tl.full((GROUP_PAD,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((GROUP_PAD,), dtype=tl.float32)
    acc = tl.zeros((GROUP_PAD, HEAD_DIM), dtype=tl.float32)
    k_head = k_cache_ptr + kv_head.to(tl.int64) * stride_kh
    v_head = v_cache_ptr + kv_head.to(tl.int64) * stride_vh
    table = block_table_ptr + seq.to(tl.int64) * stride_tb
    tokens = start + offs_t
    ok = tokens < end
    pages = tl.load(table + tokens // PAGE_SIZE, mask=ok, other=0).to(tl.int64)
    k_next = tl.load(k_head + pages[:, None] * stride_kp + (tokens % PAGE_SIZE)[:, None] * stride_ks + offs_d[None, :],
                     mask=ok[:, None], other=0.0)
    v_next = tl.load(v_head + pages[:, None] * stride_vp + (tokens % PAGE_SIZE)[:, None] * stride_vs + offs_d[None, :],
                     mask=ok[:, None], other=0.0)
    tokens = start + TILE + offs_t
    pages_next = tl.load(table + tokens // PAGE_SIZE, mask=tokens < end, other=0).to(tl.int64)
    for tile_start in range(start, end, TILE):
        k = k_next
        v = v_next
        valid = tile_start + offs_t < end
        tokens = tile_start + TILE + offs_t
        ok = tokens < end
        k_next = tl.load(k_head + pages_next[:, None] * stride_kp + (tokens % PAGE_SIZE)[:, None] * stride_ks
                         + offs_d[None, :], mask=ok[:, None], other=0.0)
        v_next = tl.load(v_head + pages_next[:, None] * stride_vp + (tokens % PAGE_SIZE)[:, None] * stride_vs
                         + offs_d[None, :], mask=ok[:, None], other=0.0)
        tokens = tokens + TILE
        pages_next = tl.load(table + tokens // PAGE_SIZE, mask=tokens < end, other=0).to(tl.int64)
        m_i, l_i, acc = online_step(tl.dot(q, tl.trans(k)), valid, v, m_i, l_i, acc, qk_scale, False)
    if SPLIT_KV:
        keep = head_ok & (start + 0 * offs_g < cache_len)  # an empty split stores nothing
    else:
        keep = head_ok
    store_result(m_i, l_i, acc, heads, keep, out_ptr, part_m_ptr, part_l_ptr, part_acc_ptr, stride_ob, stride_oh,
                 num_q_heads, HEAD_DIM, SPLIT_KV)


@triton.jit
def step_transposed(k, v, valid, q_t, m_i, l_t, acc_t, qk_scale, MASKED: tl.constexpr):
    """One tile of the online softmax with the tokens as the rows: scores^T = K q^T (TILE, G) and
    acc^T += V^T p^T (D, G). With TILE >= 64 rows and D = 128 both products are Hopper warpgroup MMAs
    (wgmma) that read the K and V tiles straight from shared memory, where the pipeliner's ring put
    them; the (G, D) x (D, TILE) form has only G <= 16 rows and runs as mma.sync, whose operands go
    through registers first. The row sums stay per token (l_t, TILE x G) and are added up once at the end:
    one cross-warp reduction a tile (the max) instead of two."""
    s_t = tl.dot(k, q_t) * qk_scale
    if MASKED:
        s_t = tl.where(valid[:, None], s_t, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s_t, 0))
    p_t = tl.math.exp2(s_t - m_new[None, :])
    alpha = tl.math.exp2(m_i - m_new)
    l_t = l_t * alpha[None, :] + p_t
    acc_t = tl.dot(tl.trans(v), p_t.to(v.dtype), acc_t * alpha[None, :])
    return m_new, l_t, acc_t


@triton.jit
def split_transposed_kernel(q_ptr, k_cache_ptr, v_cache_ptr, k_desc, v_desc, block_table_ptr, cache_lens_ptr,
                            out_ptr, part_m_ptr, part_l_ptr, part_acc_ptr,
                            stride_qb, stride_qh, stride_kp, stride_ks, stride_kh, stride_vp, stride_vs, stride_vh,
                            stride_tb, stride_ob, stride_oh, tokens_per_split, qk_scale,
                            GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr,
                            PAGE_SIZE: tl.constexpr, TILE: tl.constexpr, SPLIT_KV: tl.constexpr, TMA: tl.constexpr):
    # The split kernel in the transposed form of step_transposed. TMA False: K and V gathered through
    # the block table with pointer loads (cp.async), any page size. TMA True (TILE == PAGE_SIZE): each
    # whole page's (PAGE_SIZE, D) box of one KV head is one tensor-memory-accelerator copy from
    # k_desc / v_desc (the pools seen as (num_pages * page_size, H_kv * D)); the partial last page of
    # a split is gathered with masked pointer loads, as slots past cache_len may hold NaN.
    split = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq = tl.program_id(2)
    num_q_heads = tl.num_programs(1) * GROUP
    cache_len = tl.load(cache_lens_ptr + seq)
    start = split * tokens_per_split
    end = tl.minimum(start + tokens_per_split, cache_len)
    offs_g = tl.arange(0, GROUP_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, TILE)
    heads = kv_head * GROUP + offs_g
    head_ok = offs_g < GROUP
    q_t = tl.load(q_ptr + seq * stride_qb + heads[None, :] * stride_qh + offs_d[:, None], mask=head_ok[None, :],
                  other=0.0)
    m_i = tl.full((GROUP_PAD,), float("-inf"), dtype=tl.float32)
    l_t = tl.zeros((TILE, GROUP_PAD), dtype=tl.float32)
    acc_t = tl.zeros((HEAD_DIM, GROUP_PAD), dtype=tl.float32)
    k_head = k_cache_ptr + kv_head.to(tl.int64) * stride_kh
    v_head = v_cache_ptr + kv_head.to(tl.int64) * stride_vh
    table = block_table_ptr + seq.to(tl.int64) * stride_tb
    if TMA:
        tail = start + tl.maximum(end - start, 0) // TILE * TILE  # whole pages before it
        for tile_start in range(start, tail, TILE):
            row = tl.load(table + tile_start // PAGE_SIZE) * PAGE_SIZE
            k = k_desc.load([row, kv_head * HEAD_DIM])
            v = v_desc.load([row, kv_head * HEAD_DIM])
            m_i, l_t, acc_t = step_transposed(k, v, offs_t < TILE, q_t, m_i, l_t, acc_t, qk_scale, False)
    else:
        tail = start
    for tile_start in range(tail, end, TILE):  # TMA: at most one partial page
        tokens = tile_start + offs_t
        valid = tokens < end
        pages = tl.load(table + tokens // PAGE_SIZE, mask=valid, other=0).to(tl.int64)
        slots = tokens % PAGE_SIZE
        k = tl.load(k_head + pages[:, None] * stride_kp + slots[:, None] * stride_ks + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        v = tl.load(v_head + pages[:, None] * stride_vp + slots[:, None] * stride_vs + offs_d[None, :],
                    mask=valid[:, None], other=0.0)
        m_i, l_t, acc_t = step_transposed(k, v, valid, q_t, m_i, l_t, acc_t, qk_scale, True)
    if SPLIT_KV:
        keep = head_ok & (start + 0 * offs_g < cache_len)  # an empty split stores nothing
    else:
        keep = head_ok
    store_result(m_i, tl.sum(l_t, 0), tl.trans(acc_t), heads, keep, out_ptr, part_m_ptr, part_l_ptr, part_acc_ptr,
                 stride_ob, stride_oh, num_q_heads, HEAD_DIM, SPLIT_KV)


@triton.jit
def split_dynamic_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, cache_lens_ptr, counter_ptr,
                         part_m_ptr, part_l_ptr, part_acc_ptr,
                         stride_qb, stride_qh, stride_kp, stride_ks, stride_kh, stride_vp, stride_vs, stride_vh,
                         stride_tb, qk_scale,
                         GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr,
                         PAGE_SIZE: tl.constexpr, TILE: tl.constexpr, CHUNK: tl.constexpr):
    # The split kernel with its work handed out at run time: the programs of one (sequence, KV head)
    # take chunks of CHUNK tokens from that pair's counter (an atomic add each) until none is left, so a
    # program on a fast SM takes more chunks than one on a slow SM. The online softmax does not care in
    # which order or which tiles it folds, so each program still keeps one (m, l, acc) and stores one
    # partial, empty ((-inf, 0, 0)) if it got no chunk. The next chunk is claimed before this one is
    # read, so the atomic's round trip is not in the way. The combine resets the counters.
    kv_head = tl.program_id(1)
    seq = tl.program_id(2)
    num_q_heads = tl.num_programs(1) * GROUP
    counter = counter_ptr + seq * tl.num_programs(1) + kv_head
    cache_len = tl.load(cache_lens_ptr + seq)
    n_chunks = (cache_len + CHUNK - 1) // CHUNK
    chunk = tl.atomic_add(counter, 1, sem="relaxed")
    offs_g = tl.arange(0, GROUP_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, TILE)
    heads = kv_head * GROUP + offs_g
    head_ok = offs_g < GROUP
    q = tl.load(q_ptr + seq * stride_qb + heads[:, None] * stride_qh + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    m_i = tl.full((GROUP_PAD,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((GROUP_PAD,), dtype=tl.float32)
    acc = tl.zeros((GROUP_PAD, HEAD_DIM), dtype=tl.float32)
    k_head = k_cache_ptr + kv_head.to(tl.int64) * stride_kh
    v_head = v_cache_ptr + kv_head.to(tl.int64) * stride_vh
    table = block_table_ptr + seq.to(tl.int64) * stride_tb
    while chunk < n_chunks:
        next_chunk = tl.atomic_add(counter, 1, sem="relaxed")
        start = chunk * CHUNK
        end = tl.minimum(start + CHUNK, cache_len)
        for tile_start in range(start, end, TILE):
            tokens = tile_start + offs_t
            valid = tokens < end
            pages = tl.load(table + tokens // PAGE_SIZE, mask=valid, other=0).to(tl.int64)
            slots = tokens % PAGE_SIZE
            k = tl.load(k_head + pages[:, None] * stride_kp + slots[:, None] * stride_ks + offs_d[None, :],
                        mask=valid[:, None], other=0.0)
            v = tl.load(v_head + pages[:, None] * stride_vp + slots[:, None] * stride_vs + offs_d[None, :],
                        mask=valid[:, None], other=0.0)
            m_i, l_i, acc = online_step(tl.dot(q, tl.trans(k)), valid, v, m_i, l_i, acc, qk_scale, True)
        chunk = next_chunk
    row = (seq * num_q_heads + heads) * tl.num_programs(0) + tl.program_id(0)
    tl.store(part_m_ptr + row, m_i, mask=head_ok)
    tl.store(part_l_ptr + row, l_i, mask=head_ok)
    tl.store(part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], acc, mask=head_ok[:, None])


@triton.jit
def combine_reset_kernel(part_m_ptr, part_l_ptr, part_acc_ptr, counter_ptr, out_ptr, stride_ob, stride_oh, num_splits,
                         GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, SPLITS_PAD: tl.constexpr):
    # The merge of every split's partial (empty ones weigh exp2(-inf) = 0); the first query head of each
    # group then sets its pair's counter back to 0 for the next step.
    seq = tl.program_id(0)
    head = tl.program_id(1)
    num_q_heads = tl.num_programs(1)
    offs_s = tl.arange(0, SPLITS_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    ok = offs_s < num_splits
    row = (seq * num_q_heads + head) * num_splits + offs_s
    m = tl.load(part_m_ptr + row, mask=ok, other=float("-inf"))
    l = tl.load(part_l_ptr + row, mask=ok, other=0.0)
    acc = tl.load(part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], mask=ok[:, None], other=0.0)
    m_all = tl.max(m, 0)
    m_ref = tl.where(m_all == float("-inf"), 0.0, m_all)
    w = tl.math.exp2(m - m_ref)
    total = tl.sum(w * l, 0)
    out = tl.sum(w[:, None] * acc, 0) / tl.where(total == 0.0, 1.0, total)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + offs_d, out.to(out_ptr.dtype.element_ty))
    if head % GROUP == 0:
        tl.store(counter_ptr + seq * (num_q_heads // GROUP) + head // GROUP, 0)


@triton.jit
def split_bd_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, cache_lens_ptr, out_ptr,
                    part_m_ptr, part_l_ptr, part_acc_ptr,
                    stride_qb, stride_qh, stride_kp, stride_ks, stride_vp, stride_vs,
                    stride_tb, stride_ob, stride_oh, tokens_per_split, capacity, qk_scale,
                    GROUP: tl.constexpr, HEADS: tl.constexpr, ROWS: tl.constexpr, HEAD_DIM: tl.constexpr,
                    PAGE_SIZE: tl.constexpr, TILE: tl.constexpr, SPLIT_KV: tl.constexpr):
    # HEADS consecutive KV heads per program: each token's rows of those heads are HEADS * D contiguous
    # elements, read as one row. The HEADS * G query rows sit block-diagonally in a (ROWS, HEADS * D)
    # matrix (row r holds its query in the columns of its KV head r // G, zeros elsewhere), so one
    # tl.dot gives every row its scores against its own head; p @ V gives each row the values of every
    # head, and only its own head's columns are stored.
    split = tl.program_id(0)
    head_group = tl.program_id(1)
    seq = tl.program_id(2)
    num_splits = tl.num_programs(0)
    num_q_heads = tl.num_programs(1) * HEADS * GROUP
    cache_len = tl.load(cache_lens_ptr + seq)
    start = split * tokens_per_split
    end = tl.minimum(start + tokens_per_split, cache_len)
    loop_end = tl.minimum(start + tokens_per_split, capacity)
    offs_r = tl.arange(0, ROWS)
    offs_c = tl.arange(0, HEADS * HEAD_DIM)
    offs_t = tl.arange(0, TILE)
    heads = head_group * HEADS * GROUP + offs_r  # query head of each row
    row_ok = offs_r < HEADS * GROUP
    own = (offs_c[None, :] // HEAD_DIM == offs_r[:, None] // GROUP) & row_ok[:, None]  # (ROWS, HEADS*D)
    q = tl.load(q_ptr + seq * stride_qb + heads[:, None] * stride_qh + (offs_c % HEAD_DIM)[None, :], mask=own, other=0.0)
    m_i = tl.full((ROWS,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((ROWS,), dtype=tl.float32)
    acc = tl.zeros((ROWS, HEADS * HEAD_DIM), dtype=tl.float32)
    col0 = head_group.to(tl.int64) * HEADS * HEAD_DIM  # the first KV head's column in a token's row
    table = block_table_ptr + seq.to(tl.int64) * stride_tb
    for tile_start in range(start, loop_end, TILE):
        tokens = tile_start + offs_t
        valid = tokens < end
        pages = tl.load(table + tokens // PAGE_SIZE, mask=tokens < loop_end, other=0).to(tl.int64)
        slots = tokens % PAGE_SIZE
        k = tl.load(k_cache_ptr + col0 + pages[:, None] * stride_kp + slots[:, None] * stride_ks + offs_c[None, :],
                    mask=valid[:, None], other=0.0)
        v = tl.load(v_cache_ptr + col0 + pages[:, None] * stride_vp + slots[:, None] * stride_vs + offs_c[None, :],
                    mask=valid[:, None], other=0.0)
        m_i, l_i, acc = online_step(tl.dot(q, tl.trans(k)), valid, v, m_i, l_i, acc, qk_scale, True)
    if SPLIT_KV:
        row = (seq * num_q_heads + heads) * num_splits + split
        tl.store(part_m_ptr + row, m_i, mask=row_ok)
        tl.store(part_l_ptr + row, l_i, mask=row_ok)
        tl.store(part_acc_ptr + row[:, None] * HEAD_DIM + (offs_c % HEAD_DIM)[None, :], acc, mask=own)
    else:
        l_safe = tl.where(l_i == 0.0, 1.0, l_i)
        tl.store(out_ptr + seq * stride_ob + heads[:, None] * stride_oh + (offs_c % HEAD_DIM)[None, :],
                 (acc / l_safe[:, None]).to(out_ptr.dtype.element_ty), mask=own)


def bd_launcher(q, k_cache, v_cache, table, lens, config, heads, merge="two-launch"):
    TILE, warps, stages, per_sm = config
    B, Hq, d = q.shape
    _, page_size, Hkv, _ = k_cache.shape
    group = Hq // Hkv
    capacity = table.shape[1] * page_size
    splits = sol.num_splits(capacity, B, Hkv // heads, sol._num_sms(q.device), tile_tokens=TILE, programs_per_sm=per_sm)
    tiles = max(1, triton.cdiv(capacity, TILE))
    splits = triton.cdiv(tiles, triton.cdiv(tiles, splits))
    tokens_per_split = triton.cdiv(tiles, splits) * TILE
    out = torch.empty((B, Hq, d), dtype=q.dtype, device=q.device)
    split_kv = splits > 1
    part_m = torch.empty((B, Hq, splits), dtype=torch.float32, device=q.device)
    part_l = torch.empty((B, Hq, splits), dtype=torch.float32, device=q.device)
    part_acc = torch.empty((B, Hq, splits, d), dtype=torch.float32, device=q.device)
    resources = {}

    def run():
        compiled = split_bd_kernel[(splits, Hkv // heads, B)](
            q, k_cache, v_cache, table, lens, out, part_m, part_l, part_acc, q.stride(0), q.stride(1),
            k_cache.stride(0), k_cache.stride(1), v_cache.stride(0), v_cache.stride(1), table.stride(0),
            out.stride(0), out.stride(1), tokens_per_split, capacity, 1 / math.sqrt(d) * sol.LOG2E,
            GROUP=group, HEADS=heads, ROWS=max(16, triton.next_power_of_2(heads * group)), HEAD_DIM=d,
            PAGE_SIZE=page_size, TILE=TILE, SPLIT_KV=split_kv, num_warps=warps, num_stages=stages)
        if compiled is not None:
            resources.update(n_regs=compiled.n_regs, shared=compiled.metadata.shared)
        if split_kv and merge == "two-launch":
            combine_kernel[(B, Hq)](part_m, part_l, part_acc, lens, out, out.stride(0), out.stride(1),
                                    tokens_per_split, splits, HEAD_DIM=d, SPLITS_PAD=triton.next_power_of_2(splits),
                                    PDL=False, NO_LEN=False, num_warps=4)
        return out
    return run, splits, resources


@triton.jit
def combine_kernel(part_m_ptr, part_l_ptr, part_acc_ptr, cache_lens_ptr, out_ptr, stride_ob, stride_oh,
                   tokens_per_split, num_splits, HEAD_DIM: tl.constexpr, SPLITS_PAD: tl.constexpr, PDL: tl.constexpr,
                   NO_LEN: tl.constexpr):
    # The solution's combine kernel, with an optional wait for the split kernel's memory (PDL).
    if PDL:
        gdc_wait()
    seq = tl.program_id(0)
    head = tl.program_id(1)
    num_q_heads = tl.num_programs(1)
    offs_s = tl.arange(0, SPLITS_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    if NO_LEN:
        ok = offs_s < num_splits
    else:
        cache_len = tl.load(cache_lens_ptr + seq)
        n_valid = (cache_len + tokens_per_split - 1) // tokens_per_split
        ok = offs_s < n_valid
    row = (seq * num_q_heads + head) * num_splits + offs_s
    m = tl.load(part_m_ptr + row, mask=ok, other=float("-inf"))
    l = tl.load(part_l_ptr + row, mask=ok, other=0.0)
    acc = tl.load(part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], mask=ok[:, None], other=0.0)
    m_all = tl.max(m, 0)
    m_ref = tl.where(m_all == float("-inf"), 0.0, m_all)
    w = tl.math.exp2(m - m_ref)
    total = tl.sum(w * l, 0)
    out = tl.sum(w[:, None] * acc, 0) / tl.where(total == 0.0, 1.0, total)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + offs_d, out.to(out_ptr.dtype.element_ty))


@triton.jit
def combine_loop_kernel(part_m_ptr, part_l_ptr, part_acc_ptr, cache_lens_ptr, out_ptr, stride_ob, stride_oh,
                        tokens_per_split, num_splits, HEAD_DIM: tl.constexpr, CHUNK: tl.constexpr):
    # The merge for many splits: CHUNK partials at a time, folded into a running (max, sum, acc) by the
    # same rule, so the registers hold CHUNK x D floats however many splits there are.
    seq = tl.program_id(0)
    head = tl.program_id(1)
    num_q_heads = tl.num_programs(1)
    offs_s = tl.arange(0, CHUNK)
    offs_d = tl.arange(0, HEAD_DIM)
    cache_len = tl.load(cache_lens_ptr + seq)
    n_valid = (cache_len + tokens_per_split - 1) // tokens_per_split
    m_run = tl.full((1,), float("-inf"), tl.float32)
    l_run = tl.zeros((1,), tl.float32)
    acc_run = tl.zeros((HEAD_DIM,), tl.float32)
    for s0 in range(0, n_valid, CHUNK):
        ok = s0 + offs_s < n_valid
        row = (seq * num_q_heads + head) * num_splits + s0 + offs_s
        m = tl.load(part_m_ptr + row, mask=ok, other=float("-inf"))
        l = tl.load(part_l_ptr + row, mask=ok, other=0.0)
        acc = tl.load(part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], mask=ok[:, None], other=0.0)
        m_new = tl.maximum(m_run, tl.max(m, 0))  # finite: the chunk holds a split with tokens
        w = tl.math.exp2(m - m_new)
        scale = tl.math.exp2(m_run - m_new)
        l_run = l_run * scale + tl.sum(w * l, 0)
        acc_run = acc_run * scale + tl.sum(w[:, None] * acc, 0)
        m_run = m_new
    out = acc_run / tl.where(l_run == 0.0, 1.0, l_run)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + offs_d, out.to(out_ptr.dtype.element_ty))


#: mode -> (merge, flags): merge is "two-launch", "split-only", "pdl" or "ticket"; "cap" loops by capacity
#: (LOOP_BY_CAPACITY), "nolen" stores empty partials and merges without cache_len.
MODES = ("two-launch", "split-only", "pdl", "cap-two-launch", "cap-split-only", "cap-nolen-two-launch",
         "cap-nolen-pdl")


def launcher(q, k_cache, v_cache, table, lens, config, mode):
    prefetch = config[0] == "pf"  # ("pf", TILE, num_warps, programs per SM): split_prefetch_kernel, num_stages 1
    if prefetch:
        config = (*config[1:3], 1, config[3])
    kind = config[0] if config[0] in ("t", "tma", "dyn") else None  # ("t" | "tma", TILE, warps, stages, per SM)
    chunk_tiles = config[5] if kind == "dyn" else None  # ("dyn", TILE, warps, stages, per SM, tiles a chunk)
    if kind:
        config = config[1:5]
    TILE, warps, stages, per_sm = config[:4]
    maxnreg = {"maxnreg": config[4]} if len(config) > 4 and config[4] else {}  # a register cap: more programs fit
    B, Hq, d = q.shape
    _, page_size, Hkv, _ = k_cache.shape
    group = Hq // Hkv
    capacity = table.shape[1] * page_size
    splits = sol.num_splits(capacity, B, Hkv, sol._num_sms(q.device),
                            tile_tokens=TILE, programs_per_sm=per_sm)
    tiles = max(1, triton.cdiv(capacity, TILE))
    tiles_per_split = triton.cdiv(tiles, splits)
    splits = triton.cdiv(tiles, tiles_per_split)
    tokens_per_split = tiles_per_split * TILE
    out = torch.empty((B, Hq, d), dtype=q.dtype, device=q.device)
    split_kv = splits > 1
    part_m = torch.empty((B, Hq, splits), dtype=torch.float32, device=q.device)
    part_l = torch.empty((B, Hq, splits), dtype=torch.float32, device=q.device)
    part_acc = torch.empty((B, Hq, splits, d), dtype=torch.float32, device=q.device)
    count = torch.zeros((B * Hkv,), dtype=torch.int32, device=q.device)
    merge = mode.split("-", 2)[-1] if mode.startswith("cap-nolen") else mode.removeprefix("cap-")
    flags = set(mode.split("-"))
    pdl = merge == "pdl" and split_kv
    ticket = merge == "ticket" and split_kv
    splits_pad = triton.next_power_of_2(splits) if ticket else 1  # a constant only the ticket merge reads
    resources = {}

    def record(compiled):
        if compiled is not None:  # None in the interpreter
            resources.update(n_regs=compiled.n_regs, shared=compiled.metadata.shared)

    def combine():
        """The merge after the split kernel, as ``mode`` says: none for split-only, ticket or one split."""
        if not split_kv or merge not in ("two-launch", "pdl"):
            return
        if splits > 64:  # too many partials to hold at once: 32 at a time
            combine_loop_kernel[(B, Hq)](part_m, part_l, part_acc, lens, out, out.stride(0), out.stride(1),
                                         tokens_per_split, splits, HEAD_DIM=d, CHUNK=32, num_warps=4)
        else:
            combine_kernel[(B, Hq)](part_m, part_l, part_acc, lens, out, out.stride(0), out.stride(1),
                                    tokens_per_split, splits, HEAD_DIM=d, SPLITS_PAD=triton.next_power_of_2(splits),
                                    PDL=pdl, NO_LEN="nolen" in flags, num_warps=4, launch_pdl=pdl)

    def run_prefetch():
        compiled = split_prefetch_kernel[(splits, Hkv, B)](
            q, k_cache, v_cache, table, lens, out, part_m, part_l, part_acc,
            q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
            v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), table.stride(0), out.stride(0), out.stride(1),
            tokens_per_split, 1 / math.sqrt(d) * sol.LOG2E,
            GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), HEAD_DIM=d, PAGE_SIZE=page_size,
            TILE=TILE, SPLIT_KV=split_kv, num_warps=warps, num_stages=1)
        record(compiled)
        combine()
        return out

    def run():
        compiled = split_kernel[(splits, Hkv, B)](
            q, k_cache, v_cache, table, lens, out, part_m, part_l, part_acc, count,
            q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
            v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), table.stride(0), out.stride(0), out.stride(1),
            tokens_per_split, capacity, 1 / math.sqrt(d) * sol.LOG2E,
            GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), HEAD_DIM=d, PAGE_SIZE=page_size,
            TILE=TILE, SPLIT_KV=split_kv, PDL=pdl, TICKET=ticket, SPLITS_PAD=splits_pad,
            LOOP_BY_CAPACITY="cap" in flags, EMPTY_PARTIALS="nolen" in flags, num_warps=warps, num_stages=stages,
            **maxnreg)
        record(compiled)
        combine()
        return out

    def run_transposed():
        descs = (None, None)
        if kind == "tma":
            if TILE != page_size:
                raise ValueError(f"TMA: one box per page, TILE {TILE} != page_size {page_size}")
            descs = tuple(TensorDescriptor.from_tensor(c.view(-1, Hkv * d), [TILE, d]) for c in (k_cache, v_cache))
        compiled = split_transposed_kernel[(splits, Hkv, B)](
            q, k_cache, v_cache, *descs, table, lens, out, part_m, part_l, part_acc,
            q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
            v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), table.stride(0), out.stride(0), out.stride(1),
            tokens_per_split, 1 / math.sqrt(d) * sol.LOG2E,
            GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), HEAD_DIM=d, PAGE_SIZE=page_size,
            TILE=TILE, SPLIT_KV=split_kv, TMA=kind == "tma", num_warps=warps, num_stages=stages)
        record(compiled)
        combine()
        return out

    def run_dynamic():
        compiled = split_dynamic_kernel[(splits, Hkv, B)](
            q, k_cache, v_cache, table, lens, count, part_m, part_l, part_acc,
            q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
            v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), table.stride(0), 1 / math.sqrt(d) * sol.LOG2E,
            GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), HEAD_DIM=d, PAGE_SIZE=page_size,
            TILE=TILE, CHUNK=chunk_tiles * TILE, num_warps=warps, num_stages=stages)
        record(compiled)
        # Always merged (one split too: the partial is not divided), and the counters reset; split-only
        # keeps the reset as a one-element memset.
        if merge == "two-launch":
            combine_reset_kernel[(B, Hq)](part_m, part_l, part_acc, count, out, out.stride(0), out.stride(1), splits,
                                          GROUP=group, HEAD_DIM=d, SPLITS_PAD=triton.next_power_of_2(splits),
                                          num_warps=4)
        else:
            count.zero_()
        return out
    if prefetch or kind:
        assert mode in ("two-launch", "split-only"), mode
        runs = {"dyn": run_dynamic, "t": run_transposed, "tma": run_transposed, None: run_prefetch}
        return runs[kind], splits, resources
    return run, splits, resources


@triton.jit
def pattern_read_kernel(k_ptr, v_ptr, table_ptr, part_ptr, tokens_per_prog, n_tokens, stride_tb,
                        H_KV: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr,
                        TILE: tl.constexpr, USE_TABLE: tl.constexpr):
    # Decode's memory access with no attention arithmetic: program (split, head group, seq) reads the
    # K and V rows of HEADS KV heads (HEADS * D contiguous elements per token, pages of
    # PAGE_SIZE tokens x H_KV heads), through the block table or (USE_TABLE False) pages in order.
    split = tl.program_id(0)
    group = tl.program_id(1)
    seq = tl.program_id(2)
    start = split * tokens_per_prog
    end = tl.minimum(start + tokens_per_prog, n_tokens)
    offs_t = tl.arange(0, TILE)
    offs_c = group * HEADS * HEAD_DIM + tl.arange(0, HEADS * HEAD_DIM)
    acc = tl.zeros((TILE, HEADS * HEAD_DIM), tl.float32)
    for t0 in range(start, end, TILE):
        tokens = t0 + offs_t
        ok = tokens < end
        if USE_TABLE:
            pages = tl.load(table_ptr + seq * stride_tb + tokens // PAGE_SIZE, mask=ok, other=0).to(tl.int64)
        else:
            pages = (seq * n_tokens + tokens).to(tl.int64) // PAGE_SIZE
        rows = (pages * PAGE_SIZE + tokens % PAGE_SIZE) * (H_KV * HEAD_DIM)
        k = tl.load(k_ptr + rows[:, None] + offs_c[None, :], mask=ok[:, None], other=0.0)
        v = tl.load(v_ptr + rows[:, None] + offs_c[None, :], mask=ok[:, None], other=0.0)
        acc += k.to(tl.float32) + v.to(tl.float32)
    tl.store(part_ptr + (seq * tl.num_programs(1) + group) * tl.num_programs(0) + split, tl.sum(tl.sum(acc, 1), 0))


def pattern_reader(k, v, table, B, S, heads, use_table, per_sm, tile_bytes=16384, warps=4, stages=3):
    _, page, Hkv, d = k.shape
    tile = tile_bytes // (heads * d * k.element_size())
    pairs = B * (Hkv // heads)
    splits = max(1, min(per_sm * sol._num_sms(k.device) // pairs, triton.cdiv(S, tile)))
    per = triton.cdiv(triton.cdiv(S, tile), splits) * tile
    splits = triton.cdiv(S, per)
    part = torch.empty(splits * pairs, device=k.device)
    return lambda: pattern_read_kernel[(splits, Hkv // heads, B)](
        k, v, table, part, per, S, table.stride(0), H_KV=Hkv, HEADS=heads, HEAD_DIM=d, PAGE_SIZE=page,
        TILE=tile, USE_TABLE=use_table, num_warps=warps, num_stages=stages)


#: The sweeps, as they ran (``--part NAME``; all by default). Configurations are (TILE,
#: num_warps, num_stages, programs per SM[, maxnreg]); patterns (KV heads per program, through the
#: block table, programs per SM); bd (KV heads per program, configuration) of the block-diagonal kernel.
PARTS = {
    # num_stages: the K/V ring of one, two and three slots; four ways to merge.
    "pipeline": dict(configs=[(64, 4, 3, 4), (64, 4, 5, 3), (64, 8, 5, 3), (64, 4, 7, 2), (32, 4, 5, 4), (32, 4, 7, 4),
                              (32, 8, 7, 4), (16, 4, 10, 5), (128, 8, 5, 1)],
                     modes=("two-launch", "split-only", "pdl", "ticket"), patterns=(), bd=()),
    # The first page asked for without cache_len, a merge without cache_len, PDL; decode's reads with no
    # arithmetic; several KV heads per program.
    "merge": dict(configs=[(64, 4, 3, 4), (32, 4, 5, 4), (32, 4, 5, 5)], modes=MODES,
                  patterns=((1, True, 4), (1, False, 4), (2, True, 4), (8, True, 4), (8, False, 4), (1, True, 8),
                            (8, True, 8)),
                  bd=((2, (16, 4, 5, 4)), (2, (32, 4, 5, 3)), (2, (32, 8, 5, 3)), (4, (16, 4, 5, 2)))),
    # More programs per SM: a register cap of 64 (8 programs of 4 warps fit the registers), tiles of 16.
    "occupancy": dict(configs=[(32, 4, 5, 4), (32, 4, 5, 5, 64), (32, 4, 5, 8, 64), (32, 4, 3, 8, 64),
                               (32, 4, 3, 6, 64), (16, 4, 5, 8), (16, 4, 5, 6)],
                      modes=("two-launch", "split-only", "cap-split-only", "cap-nolen-pdl", "cap-nolen-two-launch"),
                      patterns=((1, True, 4), (1, True, 8)), bd=()),
    # Two warps a program (more programs per SM for the same tile), and the prefetch written out in
    # registers (split_prefetch_kernel, num_stages 1: its registers, not shared memory, bound the programs
    # per SM); decode's reads at 16 programs per SM.
    "warps": dict(configs=[(32, 4, 5, 4), (32, 4, 5, 5, 96), (32, 2, 5, 5), (32, 2, 3, 8), (16, 2, 5, 8), (64, 2, 5, 3),
                           ("pf", 32, 4, 3), ("pf", 64, 4, 2), ("pf", 64, 8, 2), ("pf", 32, 2, 4)],
                  modes=("two-launch", "split-only"), patterns=((1, True, 4), (1, True, 8), (1, True, 16)), bd=()),
    # The transposed split kernel: K and V read by wgmma straight from shared memory, gathered with
    # pointer loads ("t", any page size) or one TMA copy per page ("tma", pages of 64 only). Tiles of 64
    # and 128 tokens (wgmma needs 64 rows); two K/V slots at num_stages 3 (72 KiB at TILE 64: 3 programs
    # an SM), three at 5 (105 KiB: 2).
    "wgmma": dict(configs=[(32, 4, 5, 4), ("t", 64, 4, 3, 3), ("t", 64, 4, 5, 2), ("t", 64, 8, 3, 3),
                           ("t", 128, 8, 3, 1), ("tma", 64, 4, 3, 3), ("tma", 64, 4, 5, 2), ("tma", 64, 8, 3, 3)],
                  modes=("two-launch", "split-only"), patterns=((1, True, 4),), bd=()),
    # Splits sized for 8, 12 and 16 programs an SM while 4 fit (registers): two to four waves of shorter
    # programs, which the hardware hands to whichever SM frees a slot first. Some SMs finish their
    # programs consistently later than others (decode_timeline.py); more, shorter programs let the fast
    # ones take more of the work, at the price of more partials to merge.
    # ("dyn", ..., C): one wave, the work handed out at run time in chunks of C tiles (split_dynamic_kernel).
    "waves": dict(configs=[(32, 4, 5, 4), (32, 4, 5, 8), (32, 4, 5, 12), (32, 4, 5, 16), (32, 4, 5, 24),
                           ("dyn", 32, 4, 5, 4, 2), ("dyn", 32, 4, 5, 4, 4), ("dyn", 32, 4, 5, 4, 8)],
                  modes=("two-launch", "split-only"), patterns=(), bd=()),
}


def main(ceiling, part: str) -> list[dict]:
    rows = []
    started = time.time()
    shapes = ((1, 32768), (8, 8192), (64, 4096))
    configs, modes = PARTS[part]["configs"], PARTS[part]["modes"]
    patterns, bd_configs = PARTS[part]["patterns"], PARTS[part]["bd"]
    # Correctness of every variant first, on a small mixed-length batch (a zero-length sequence included).
    gen = torch.Generator().manual_seed(3)
    lens_small = [700, 1, 0, 4097, 65]
    for page in (16, 64):
        pages = [-(-n // page) for n in lens_small]
        num_pages = sum(pages) + 2
        k = torch.randn((num_pages, page, H_KV, D), generator=gen).bfloat16().cuda()
        v = torch.randn((num_pages, page, H_KV, D), generator=gen).bfloat16().cuda()
        order = torch.randperm(num_pages, generator=gen)
        table = torch.zeros((len(lens_small), max(pages)), dtype=torch.int32)
        used = 0
        for b, n in enumerate(pages):
            table[b, :n] = order[used:used + n]
            used += n
        table, lens = table.cuda(), torch.tensor(lens_small, dtype=torch.int32).cuda()
        q = torch.randn((len(lens_small), H_Q, D), generator=gen).bfloat16().cuda()
        want = reference(q, k, v, table, lens, scale=1 / math.sqrt(D))
        for config, mode in itertools.product(configs, modes):
            if "split-only" in mode:
                continue
            try:
                run, splits, _ = launcher(q, k, v, table, lens, config, mode)
                errs = []
                for _ in range(3):  # again and again: the ticket counter must reset itself
                    errs.append(float((run().double() - want).abs().max()))
                rows.append({"part": f"{part}-check", "config": list(config), "mode": mode, "page_size": page,
                             "splits": splits, "max_abs_error": max(errs)})
            except Exception as exc:  # noqa: BLE001
                rows.append({"part": f"{part}-check", "config": list(config), "mode": mode, "page_size": page,
                             "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        for heads, config in bd_configs:
            try:
                run, splits, _ = bd_launcher(q, k, v, table, lens, config, heads)
                rows.append({"part": f"{part}-check", "config": list(config), "mode": f"bd{heads}", "page_size": page,
                             "splits": splits, "max_abs_error": float((run().double() - want).abs().max())})
            except Exception as exc:  # noqa: BLE001
                rows.append({"part": f"{part}-check", "config": list(config), "mode": f"bd{heads}", "page_size": page,
                             "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
    bad = [r for r in rows if r.get("error") or r.get("max_abs_error", 0) > 2e-2]
    print(f"checks: {len(rows)} rows, {len(bad)} bad", bad[:4], flush=True)

    for (B, S), page in itertools.product(shapes, (16, 64)):
        q, k, v, table, lens = paged_inputs(B, S, page)
        moved = nbytes(B, S, page)
        want = sol.decode_attention(q, k, v, table, lens).float()
        plain = torch.randn(moved // 2, device="cuda", dtype=torch.bfloat16)
        parts = torch.empty(triton.cdiv(plain.numel(), 4096), device="cuda")
        raw = {"read": lambda: read_kernel[(parts.numel(),)](plain, parts, plain.numel(), BLOCK=4096),
               "solution": lambda: sol.decode_attention(q, k, v, table, lens),
               "empty": lambda: empty_kernel[(1,)](parts)}
        timed = {name: (bandwidth.graphed(fn), {}) for name, fn in raw.items()}
        keep = []
        for heads, use_table, per_sm in patterns:
            name = f"pattern-h{heads}-{'table' if use_table else 'inorder'}-p{per_sm}"
            try:
                fn = pattern_reader(k, v, table, B, S, heads, use_table, per_sm)
                fn()
                timed[name] = (bandwidth.graphed(fn), {})
                raw[name] = fn
            except Exception as exc:  # noqa: BLE001
                rows.append({"part": f"{part}-sweep", "kernel": name, "B": B, "S_k": S, "page_size": page,
                             "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        for config, mode in itertools.product(configs, modes):
            name = f"{'-'.join(map(str, config))}/{mode}"
            print("config", B, S, page, name, flush=True)
            try:
                run, splits, resources = launcher(q, k, v, table, lens, config, mode)
                out = run()
                err = float((out.float() - want).abs().max()) if "split-only" not in mode else None
                graph = bandwidth.graphed(run)
                graph()
                torch.cuda.synchronize()
                keep.append(run)
                raw[name] = run
                timed[name] = (graph, {"config": list(config), "mode": mode, "splits": splits, "err": err, **resources})
            except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory, PDL not capturable
                rows.append({"part": f"{part}-sweep", "kernel": name, "B": B, "S_k": S, "page_size": page,
                             "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        for (heads, config), merge in itertools.product(bd_configs, ("two-launch", "split-only")):
            name = f"bd{heads}-{'-'.join(map(str, config))}/{merge}"
            try:
                run, splits, resources = bd_launcher(q, k, v, table, lens, config, heads, merge)
                out = run()
                err = float((out.float() - want).abs().max()) if merge != "split-only" else None
                graph = bandwidth.graphed(run)
                keep.append(run)
                raw[name] = run
                timed[name] = (graph, {"config": list(config), "mode": f"bd{heads}-{merge}", "splits": splits,
                                       "err": err, **resources})
            except Exception as exc:  # noqa: BLE001
                rows.append({"part": f"{part}-sweep", "kernel": name, "B": B, "S_k": S, "page_size": page,
                             "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        runs = {name: [] for name in timed}
        for _ in range(2):
            for name, (fn, _) in timed.items():
                runs[name].append(bandwidth.time_ms_clean_l2(fn, reps=40))
        # The same kernels as nodes of a graph of 16 steps, each after a read flush (grader.bandwidth.time_ms_in_graph).
        in_graph = {name: [] for name in timed}
        for _ in range(2):
            for name in timed:
                try:
                    in_graph[name].append(bandwidth.time_ms_in_graph(raw[name]))
                except Exception as exc:  # noqa: BLE001
                    rows.append({"part": f"{part}-in-graph", "kernel": name, "B": B, "S_k": S, "page_size": page,
                                 "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        for name, times in runs.items():
            ms = statistics.median(times)
            row = {"part": f"{part}-sweep", "kernel": name, "B": B, "S_k": S, "page_size": page, "ms": round(ms, 5),
                   "ms_runs": [round(t, 5) for t in times], "bytes": moved,
                   "fraction": round(bandwidth.gbps(moved, ms) / ceiling.ceiling_gbps, 4), **timed[name][1]}
            if in_graph[name]:
                ms_graph = statistics.median(in_graph[name])
                row.update(ms_in_graph=round(ms_graph, 5), ms_in_graph_runs=[round(t, 5) for t in in_graph[name]],
                           fraction_in_graph=round(bandwidth.gbps(moved, ms_graph) / ceiling.ceiling_gbps, 4))
            rows.append(row)
        print(f"B {B} S {S} page {page}: {time.time() - started:.0f} s", flush=True)
        del q, k, v, table, lens, plain, timed, keep
        torch.cuda.empty_cache()

    print(f"\n=== {part}: fraction of the ceiling ({ceiling.ceiling_gbps:.1f} GB/s), timed | in a graph; "
          f"per config: {' '.join(modes)} ===")
    for (B, S), page in itertools.product(shapes, (16, 64)):
        get = {r["kernel"]: r for r in rows if r["part"] == f"{part}-sweep" and r["B"] == B and r["page_size"] == page}
        print(f"B {B:2d} S {S:5d} page {page}: empty {get['empty']['ms'] * 1e3:.2f} us ({get['empty'].get('ms_in_graph', 0) * 1e3:.2f})  "
              f"read {get['read']['fraction']:.3f} ({get['read'].get('fraction_in_graph')})  "
              f"solution {get['solution']['fraction']:.3f} ({get['solution'].get('fraction_in_graph')})  "
              + " ".join(f"{n[8:]}:{r['fraction']:.3f}|{r.get('fraction_in_graph')}" for n, r in get.items()
                       if n.startswith("pattern") and "fraction" in r))
        for config in configs:
            c = "-".join(map(str, config))
            cells = [f"{get[f'{c}/{m}']['fraction']:.3f}|{get[f'{c}/{m}'].get('fraction_in_graph')}"
                     if "fraction" in get.get(f"{c}/{m}", {}) else "  -  " for m in modes]
            extra = get.get(f"{c}/two-launch", {})
            print(f"    {c:>10}: {' '.join(cells)}  s{extra.get('splits')} r{extra.get('n_regs')} sh{extra.get('shared')}")
        for (heads, config) in bd_configs:
            c = f"bd{heads}-{'-'.join(map(str, config))}"
            cells = [f"{get[f'{c}/{m}']['fraction']:.3f}|{get[f'{c}/{m}'].get('fraction_in_graph')}"
                     if "fraction" in get.get(f"{c}/{m}", {}) else "  -  " for m in ("two-launch", "split-only")]
            extra = get.get(f"{c}/two-launch", {})
            print(f"    {c:>14}: {' '.join(cells)}  s{extra.get('splits')} r{extra.get('n_regs')} sh{extra.get('shared')}")
    errors = [r for r in rows if "error" in r]
    print(len(errors), "errors", [(r.get("kernel") or r.get("mode"), r["error"][:120]) for r in errors[:6]])
    return rows


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=sorted(PARTS), action="append", help="one sweep (repeatable); all by default")
    args = parser.parse_args()
    ceiling, _ = bandwidth.measure_ceiling(refresh=True)
    rows = []
    for part in args.part or list(PARTS):
        rows += main(ceiling, part)
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d"), "ceiling_gbps": round(ceiling.ceiling_gbps, 1),
            "timing": "CUDA graph replay after a read flush (grader.bandwidth.time_ms_clean_l2), median of 40, two turns; "
                      "fraction_in_graph: grader.bandwidth.time_ms_in_graph, two turns"}
    json.dump({"meta": meta, "rows": rows}, open(os.path.join(OUT, "decode_probe.json"), "w"), indent=1)
