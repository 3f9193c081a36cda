"""Decode over a paged KV cache: exercise 8's solution against its peers, on one GPU, in one run.

Parts, each in its own try (a failure in one is recorded as a row and the others still run), each
written to the JSON file as soon as it is done:

``check``    the solution against a float64 reference on a few GPU shapes (fp16 and bf16, pages of 16
             and 64, mixed lengths, a zero-length sequence): ``max_abs_error`` per shape.
``targets``  the three target shapes (H_q 32, H_kv 8, D 128, bf16: B 1 S_k 32768, B 8 S_k 8192,
             B 64 S_k 4096), in turns, three rounds: the solution over pages of 16 and of 64; PyTorch's
             SDPA with ``enable_gqa=True`` on the cache gathered into contiguous tensors, timed three
             ways (the gather alone, SDPA alone on a gathered copy, both together); a plain Triton kernel
             with one program per (sequence, query head) and no split (`per_head_kernel` below, not
             shipped to learners); FlashInfer's ``BatchDecodeWithPagedKVCacheWrapper`` over the same
             pages of 16 and 64 (skipped with its exact reason when it does not import or compile).
             Each timed three ways: from Python (``do_bench``); replayed from a CUDA graph after a read
             flush (``-graph-clean-l2``); and as a node of a 16-step graph (``-in-graph``, the graph's
             launch and the timing events left out: `grader.bandwidth.time_ms_in_graph`).
``configs``  candidate configurations of the solution (tile, warps, stages, programs per SM) and a
             variant without ``tl.dot`` (broadcast products over the G real heads), each in turns with
             the solution's default at the target shapes and both page sizes; ``best config`` rows.
``sweep``    B in 1, 4, 8, 16, 32, 64 × S_k in 1024 ... 32768 (H_q 32, H_kv 8, D 128, bf16, pages of 16):
             the solution and FlashInfer in turns, two rounds, for the plot.
``step``     Amdahl for one decode step of one transformer layer with Llama-3-8B's shapes (d_model 4096,
             H_q 32, H_kv 8, D 128, FFN 14336, bf16): each operator timed alone (L2 flushed), attention
             by the solution, at B 1 and 64 with S_k 4096 and 32768; its share of the step.

Every bandwidth figure is the spec's minimum bytes (the valid K and V rows once, q and out) over the
median time; ``fraction`` is of the measured ceiling (``meta.ceiling_gbps``). Peers timed in turns
(`grader.bandwidth.time_in_turns`); ``ms`` is the median of a kernel's rounds, all rounds kept in ``ms_runs``.

On the GPU machine, from the repository root (about four minutes on an H200, FlashInfer's JIT
compilation included; `tools/device/prepare_flashinfer.sh` builds the FlashInfer folder first)::

    PYTHONPATH=. python -m tools.benchmarks.ex08_decode --out "$OUT"

writes ``$OUT/h200-ex08-decode.json`` (the exercise file: check, targets, configs, sweep) and
``$OUT/h200-ex08-decode-step.json`` (the step profile), then prints a summary table. The same rows
come from ``python -m tools.benchmarks ex08_decode`` (one file).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import torch
import triton
import triton.language as tl

from grader import bandwidth
from grader.exercises.ex08_decode.spec import minimum_bytes, per_query_head_bytes, reference
from tools.benchmarks import failed_row, meta

H_Q, H_KV, D = 32, 8, 128
TARGETS = [(1, 32768), (8, 8192), (64, 4096)]  # (B, S_k): the three shapes
PAGE_SIZES = (16, 64)
SWEEP_B = (1, 4, 8, 16, 32, 64)
SWEEP_S = (1024, 2048, 4096, 8192, 16384, 32768)
#: (TILE, num_warps, num_stages, programs_per_sm): the solution's default is measured against each.
CONFIGS = [(64, 4, 3, 2), (64, 4, 2, 3), (128, 4, 2, 2), (128, 8, 3, 1), (32, 4, 4, 4), (64, 4, 1, 4),
           (64, 8, 3, 2), (64, 4, 3, 4), (128, 4, 3, 2)]
#: (TILE, num_warps, num_stages, programs_per_sm) of the broadcast variant (no tl.dot).
BROADCAST_CONFIGS = [(16, 4, 3, 2), (32, 8, 3, 2)]
#: Seconds after which the remaining points of the sweep are skipped (the whole run stays within 5 minutes).
DEADLINE_S = float(os.environ.get("EX08_DEADLINE_S", "200"))  # the parts after it are cut short
DTYPES = {torch.float16: "fp16", torch.bfloat16: "bf16"}

_started = time.time()


def _elapsed() -> float:
    return time.time() - _started


# --- inputs -------------------------------------------------------------------------------------

def paged_inputs(B: int, S: int, page_size: int, *, dtype=torch.bfloat16, seed: int = 0, H_q=H_Q, H_kv=H_KV, d=D):
    """q and a full paged cache (every sequence S tokens), pages shuffled through the pool, fresh random data."""
    generator = torch.Generator(device="cuda").manual_seed(seed)
    pages_per_seq = -(-S // page_size)
    num_pages = B * pages_per_seq
    k = torch.randn((num_pages, page_size, H_kv, d), device="cuda", dtype=dtype, generator=generator)
    v = torch.randn((num_pages, page_size, H_kv, d), device="cuda", dtype=dtype, generator=generator)
    table = torch.randperm(num_pages, device="cuda", generator=generator).to(torch.int32).reshape(B, pages_per_seq)
    q = torch.randn((B, H_q, d), device="cuda", dtype=dtype, generator=generator)
    lens = torch.full((B,), S, dtype=torch.int32, device="cuda")
    return q, k, v, table, lens


def gather(pool: torch.Tensor, table: torch.Tensor, S: int) -> torch.Tensor:
    """(B, H_kv, S, D): each sequence's pages copied into one contiguous tensor (SDPA's input)."""
    B = table.shape[0]
    return pool[table.long()].reshape(B, -1, *pool.shape[2:])[:, :S].transpose(1, 2)


def sdpa(q, k, v) -> torch.Tensor:
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q.unsqueeze(2), k, v, enable_gqa=True).squeeze(2)


def nbytes(B: int, S: int, page_size: int, *, H_q=H_Q, H_kv=H_KV, d=D, element_size: int = 2) -> int:
    return minimum_bytes([S] * B, B * -(-S // page_size), page_size, H_q, H_kv, d, element_size)


def _figures(row: dict, moved: int, ceiling: float) -> dict:
    if row.get("ms"):
        gbps = bandwidth.gbps(moved, row["ms"])
        row.update(bytes=moved, gbps=round(gbps, 1), fraction=round(gbps / ceiling, 4))
    return row


#: The contenders also timed as a CUDA-graph replay (``NAME-graph``) and by their launcher's CPU cost.
GRAPHED = ("solution-page16", "solution-page64", "sdpa-contiguous", "flashinfer-page16", "flashinfer-page64",
           "read-ceiling")


@triton.jit
def read_kernel(x_ptr,       # the bytes to read (any float dtype)
                part_ptr,    # one float32 per program: the block's sum, so the loads cannot be dropped
                n,           # elements in x
                BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32), 0))


def read_ceiling_kernel(x: torch.Tensor, block: int = 4096):
    """A launcher of the plainest read of ``x``: one block of ``block`` elements per program."""
    programs = triton.cdiv(x.numel(), block)
    part = torch.empty(programs, device=x.device, dtype=torch.float32)
    return lambda: read_kernel[(programs,)](x, part, x.numel(), BLOCK=block, num_warps=4)


def of_read_ceiling(rows: list[dict], *, B: int, ceiling: float) -> None:
    """Give every timed row of batch ``B`` its fraction of the ceiling a read-only kernel meets: the better of
    the measured ceiling (copy, add: ``ceiling``) and the plain read timed the same way in the same turns
    (``fraction_of_read_ceiling``, with that ceiling as ``read_ceiling_gbps``)."""
    ways = {"": "read-ceiling", "-graph": "read-ceiling-graph", "-clean-l2": "read-ceiling-graph-clean-l2",
            "-in-graph": "read-ceiling-in-graph"}
    mine = [r for r in rows if r.get("B") == B and r.get("gbps")]
    for suffix, name in ways.items():
        read = next((r for r in mine if r["kernel"] == name), None)
        if read is None:
            continue
        best = max(read["gbps"], ceiling)
        for r in mine:
            kernel = r["kernel"]
            way = next((w for w in ("-clean-l2", "-in-graph", "-graph") if kernel.endswith(w)), "")
            if way == suffix:
                r["read_ceiling_gbps"] = round(best, 1)
                r["fraction_of_read_ceiling"] = round(r["gbps"] / best, 4)


def _in_turns(kernels: dict, *, rounds: int, moved: int, ceiling: float, **shape) -> list[dict]:
    rows = []
    for name, times in bandwidth.time_in_turns(kernels, rounds=rounds).items():
        ms = statistics.median(times)
        rows.append(_figures({"kernel": name, **shape, "ms": round(ms, 5), "ms_runs": [round(t, 5) for t in times]},
                             moved, ceiling))
    return rows


def _rows_in_turns(timed: dict, timer, suffix: str, *, rounds: int, moved: int, ceiling: float, **shape) -> list[dict]:
    """``timed``'s functions timed by ``timer`` in turns, ``rounds`` times each; rows ``NAME-SUFFIX``
    (a timing that fails is a failed row, the others go on)."""
    runs: dict[str, list[float]] = {name: [] for name in timed}
    rows = []
    for _ in range(rounds):
        for name, fn in timed.items():
            try:
                runs[name].append(timer(fn))
            except Exception as exc:
                rows.append(failed_row(f"{name}-{suffix}", exc, **shape))
    for name, times in runs.items():
        if times:
            ms = statistics.median(times)
            rows.append(_figures({"kernel": f"{name}-{suffix}", **shape, "ms": round(ms, 5),
                                  "ms_runs": [round(t, 5) for t in times], "flush": "read"}, moved, ceiling))
    return rows


def clean_l2_rows(kernels: dict, *, moved: int, ceiling: float, rounds: int = 3, **shape) -> list[dict]:
    """The graph replays timed again after a read flush (`grader.bandwidth.time_ms_clean_l2`), in turns; among
    them ``read-same-bytes-graph``, a plain read (``torch.sum``) of the step's minimum bytes. ``torch.sum``
    is not the fastest read: a Triton kernel of one 8 KiB block per program reads the same bytes faster
    (the ``read-floor`` rows of docs/measurements/h200-ex08-decode-configs.json). Rows ``NAME-clean-l2``."""
    timed = {name: fn for name, fn in kernels.items() if name.endswith("-graph")}
    return _rows_in_turns(timed, bandwidth.time_ms_clean_l2, "clean-l2", rounds=rounds, moved=moved, ceiling=ceiling,
                          **shape)


def in_graph_rows(kernels: dict, *, moved: int, ceiling: float, rounds: int = 2, **shape) -> list[dict]:
    """The contenders of ``GRAPHED`` and the plain read as nodes of a CUDA graph of 16 steps, each after a
    read flush, in turns (`grader.bandwidth.time_ms_in_graph`): what each adds to a server's graphed decode
    step, without the graph launch and the timing events that `clean_l2_rows` charges to every call.
    Rows ``NAME-in-graph``."""
    timed = {name: kernels[name] for name in (*GRAPHED, "read-same-bytes") if name in kernels}
    return _rows_in_turns(timed, bandwidth.time_ms_in_graph, "in-graph", rounds=rounds, moved=moved, ceiling=ceiling,
                          **shape)


# --- a plain kernel: one program per (sequence, query head), no split --------------------------------

@triton.jit
def per_head_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, out_ptr,
                    stride_qb, stride_qh, stride_kp, stride_ks, stride_kh, stride_vp, stride_vs, stride_vh,
                    stride_tb, stride_ob, stride_oh, qk_scale,
                    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr, TILE: tl.constexpr):
    """The schedule the exercise replaces: each query head walks its sequence's whole cache alone, so the
    G heads of a group read the same K and V rows G times, and B · H_q programs are all there is."""
    head = tl.program_id(0)
    seq = tl.program_id(1)
    n = tl.load(lens_ptr + seq)
    d = tl.arange(0, HEAD_DIM)
    t = tl.arange(0, TILE)
    q = tl.load(q_ptr + seq * stride_qb + head * stride_qh + d).to(tl.float32)
    kv = head // GROUP
    m = float("-inf")
    l = 0.0
    acc = tl.zeros((HEAD_DIM,), tl.float32)
    for start in range(0, n, TILE):
        tokens = start + t
        ok = tokens < n
        pages = tl.load(table_ptr + seq * stride_tb + tokens // PAGE_SIZE, mask=ok, other=0).to(tl.int64)
        slots = tokens % PAGE_SIZE
        k = tl.load(k_ptr + pages[:, None] * stride_kp + slots[:, None] * stride_ks + kv * stride_kh + d[None, :],
                    mask=ok[:, None], other=0.0).to(tl.float32)
        s = tl.where(ok, tl.sum(k * q[None, :], 1) * qk_scale, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 0))
        p = tl.math.exp2(s - m_new)
        alpha = tl.math.exp2(m - m_new)
        v = tl.load(v_ptr + pages[:, None] * stride_vp + slots[:, None] * stride_vs + kv * stride_vh + d[None, :],
                    mask=ok[:, None], other=0.0).to(tl.float32)
        l = l * alpha + tl.sum(p, 0)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        m = m_new
    out = acc / tl.where(l == 0.0, 1.0, l)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + d, out.to(out_ptr.dtype.element_ty))


def per_head_decode(q, k_cache, v_cache, table, lens, tile: int = 64):
    B, H_q, d = q.shape
    _, page_size, H_kv, _ = k_cache.shape
    out = torch.empty_like(q)
    per_head_kernel[(H_q, B)](q, k_cache, v_cache, table, lens, out, q.stride(0), q.stride(1),
                              k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
                              v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), table.stride(0),
                              out.stride(0), out.stride(1), 1.4426950408889634 / math.sqrt(d),
                              GROUP=H_q // H_kv, HEAD_DIM=d, PAGE_SIZE=page_size, TILE=tile, num_warps=4)
    return out


# --- a variant of the solution without tl.dot --------------------------------------------------------

@triton.jit
def broadcast_split_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, out_ptr, m_ptr, l_ptr, acc_ptr,
                           stride_qb, stride_qh, stride_kp, stride_ks, stride_kh, stride_vp, stride_vs, stride_vh,
                           stride_tb, stride_ob, stride_oh, tokens_per_split, qk_scale,
                           GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr,
                           TILE: tl.constexpr, SPLIT_KV: tl.constexpr):
    """The solution's split kernel with the (G, D) x (D, TILE) products as broadcast-multiply-sums over the
    G real heads (G a power of two here), in float32 on the CUDA cores, instead of tl.dot on 16 padded rows."""
    split = tl.program_id(0)
    kv = tl.program_id(1)
    seq = tl.program_id(2)
    n = tl.load(lens_ptr + seq)
    start = split * tokens_per_split
    end = tl.minimum(start + tokens_per_split, n)
    g = tl.arange(0, GROUP)
    d = tl.arange(0, HEAD_DIM)
    t = tl.arange(0, TILE)
    heads = kv * GROUP + g
    q = tl.load(q_ptr + seq * stride_qb + heads[:, None] * stride_qh + d[None, :]).to(tl.float32)
    m = tl.full((GROUP,), float("-inf"), tl.float32)
    l = tl.zeros((GROUP,), tl.float32)
    acc = tl.zeros((GROUP, HEAD_DIM), tl.float32)
    for tile_start in range(start, end, TILE):
        tokens = tile_start + t
        ok = tokens < end
        pages = tl.load(table_ptr + seq * stride_tb + tokens // PAGE_SIZE, mask=ok, other=0).to(tl.int64)
        slots = tokens % PAGE_SIZE
        k = tl.load(k_ptr + pages[:, None] * stride_kp + slots[:, None] * stride_ks + kv * stride_kh + d[None, :],
                    mask=ok[:, None], other=0.0).to(tl.float32)
        s = tl.sum(q[:, None, :] * k[None, :, :], 2)
        s = tl.where(ok[None, :], s * qk_scale, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m - m_new)
        v = tl.load(v_ptr + pages[:, None] * stride_vp + slots[:, None] * stride_vs + kv * stride_vh + d[None, :],
                    mask=ok[:, None], other=0.0).to(tl.float32)
        l = l * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], 1)
        m = m_new
    if SPLIT_KV:
        row = (seq * tl.num_programs(1) * GROUP + heads) * tl.num_programs(0) + split
        keep = start + 0 * g < n
        tl.store(m_ptr + row, m, mask=keep)
        tl.store(l_ptr + row, l, mask=keep)
        tl.store(acc_ptr + row[:, None] * HEAD_DIM + d[None, :], acc, mask=keep[:, None])
    else:
        out = acc / tl.where(l == 0.0, 1.0, l)[:, None]
        tl.store(out_ptr + seq * stride_ob + heads[:, None] * stride_oh + d[None, :], out.to(out_ptr.dtype.element_ty))


def broadcast_decode(config):
    import solutions.ex08_decode as solution

    TILE, num_warps, num_stages, per_sm = config

    def run(q, k_cache, v_cache, table, lens):
        B, H_q, d = q.shape
        _, page_size, H_kv, _ = k_cache.shape
        capacity = table.shape[1] * page_size
        splits = solution.num_splits(capacity, B, H_kv, solution._num_sms(q.device), tile_tokens=TILE,
                                     programs_per_sm=per_sm)
        tiles = max(1, triton.cdiv(capacity, TILE))
        per_split = triton.cdiv(tiles, splits)
        splits = triton.cdiv(tiles, per_split)
        tokens_per_split = per_split * TILE
        out = torch.empty_like(q)
        split_kv = splits > 1
        m = torch.empty((B, H_q, splits), device=q.device, dtype=torch.float32) if split_kv else out
        l = torch.empty((B, H_q, splits), device=q.device, dtype=torch.float32) if split_kv else out
        acc = torch.empty((B, H_q, splits, d), device=q.device, dtype=torch.float32) if split_kv else out
        broadcast_split_kernel[(splits, H_kv, B)](
            q, k_cache, v_cache, table, lens, out, m, l, acc, q.stride(0), q.stride(1), k_cache.stride(0),
            k_cache.stride(1), k_cache.stride(2), v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
            table.stride(0), out.stride(0), out.stride(1), tokens_per_split, solution.LOG2E / math.sqrt(d),
            GROUP=H_q // H_kv, HEAD_DIM=d, PAGE_SIZE=page_size, TILE=TILE, SPLIT_KV=split_kv,
            num_warps=num_warps, num_stages=num_stages)
        if split_kv:
            solution.decode_combine_kernel[(B, H_q)](m, l, acc, lens, out, *out.stride(), tokens_per_split, splits,
                                                     HEAD_DIM=d, SPLITS_PAD=triton.next_power_of_2(splits))
        return out

    return run


class _Config:
    """Run the solution with another (TILE, num_warps, num_stages, programs_per_sm)."""

    def __init__(self, module, config):
        self.module, self.config = module, config

    def __enter__(self):
        self.original = self.module._config
        self.module._config = lambda page_size, head_dim: self.config

    def __exit__(self, *exc):
        self.module._config = self.original


def with_config(module, config):
    def run(*args):
        with _Config(module, config):
            return module.decode_attention(*args)
    return run


# --- FlashInfer ----------------------------------------------------------------------------------

class FlashInfer:
    """FlashInfer's paged decode kernel, or the exact reason it cannot run here (``error``)."""

    def __init__(self):
        self.error = None
        self.version = None
        self.compile_s = None
        self.workspace = None
        try:
            import flashinfer

            self.module = flashinfer
            self.version = getattr(flashinfer, "__version__", "?")
        except BaseException as exc:  # ImportError, or anything its import raises
            self.error = f"import flashinfer failed: {type(exc).__name__}: {str(exc)[:300]}"

    def decoder(self, q, k_cache, v_cache, table, lens):
        """A function that runs FlashInfer's decode on these tensors (planned once, outside the timing)."""
        if self.error:
            raise RuntimeError(self.error)
        B, H_q, d = q.shape
        _, page_size, H_kv, _ = k_cache.shape
        if self.workspace is None:
            self.workspace = torch.empty(256 << 20, dtype=torch.uint8, device=q.device)
        wrapper = self.module.BatchDecodeWithPagedKVCacheWrapper(self.workspace, "NHD")
        pages = table.shape[1]
        indptr = torch.arange(B + 1, dtype=torch.int32, device=q.device) * pages
        indices = table.reshape(-1).contiguous()
        last = ((lens - 1) % page_size + 1).to(torch.int32)
        started = time.time()
        wrapper.plan(indptr, indices, last, H_q, H_kv, d, page_size, pos_encoding_mode="NONE",
                     q_data_type=q.dtype, kv_data_type=k_cache.dtype)
        out = wrapper.run(q, (k_cache, v_cache))  # the first run compiles (JIT) if needed
        torch.cuda.synchronize()
        if self.compile_s is None:
            self.compile_s = round(time.time() - started, 1)
        del out
        return lambda: wrapper.run(q, (k_cache, v_cache))


# --- the parts -----------------------------------------------------------------------------------

def part_check(ceiling: float) -> list[dict]:
    import solutions.ex08_decode as solution

    rows = []
    generator = torch.Generator().manual_seed(1)
    for dtype in (torch.float16, torch.bfloat16):
        for page_size in PAGE_SIZES:
            B, lens = 6, [4097, 1, 0, 700, 8192, 65]
            pages = [-(-n // page_size) for n in lens]
            num_pages = sum(pages) + 3
            k = torch.randn((num_pages, page_size, H_KV, D), generator=generator).to(dtype).cuda()
            v = torch.randn((num_pages, page_size, H_KV, D), generator=generator).to(dtype).cuda()
            order = torch.randperm(num_pages, generator=generator)
            table = torch.zeros((B, max(pages) + 1), dtype=torch.int32)
            used = 0
            for b, n in enumerate(pages):
                table[b, :n] = order[used:used + n]
                used += n
            table, lens_t = table.cuda(), torch.tensor(lens, dtype=torch.int32).cuda()
            q = torch.randn((B, H_Q, D), generator=generator).to(dtype).cuda()
            try:
                out = solution.decode_attention(q, k, v, table, lens_t)
                want = reference(q, k, v, table, lens_t, scale=1 / math.sqrt(D))
                error = (out.double() - want).abs().max().item()
                rows.append({"kernel": "check", "dtype": DTYPES[dtype], "page_size": page_size,
                             "cache_lens": lens, "max_abs_error": error, "max_abs_answer": want.abs().max().item()})
            except Exception as exc:
                rows.append(failed_row("check", exc, dtype=DTYPES[dtype], page_size=page_size))
    return rows


def part_targets(ceiling: float, flashinfer: FlashInfer) -> list[dict]:
    import solutions.ex08_decode as solution

    rows = []
    for B, S in TARGETS:
        shape = dict(B=B, S_k=S, H_q=H_Q, H_kv=H_KV, D=D, dtype="bf16")
        moved = nbytes(B, S, 16)
        kernels = {}
        inputs = {ps: paged_inputs(B, S, ps, seed=B) for ps in PAGE_SIZES}
        try:
            q, k, v, table, lens = inputs[16]
            k_flat, v_flat = gather(k, table, S), gather(v, table, S)
            for ps in PAGE_SIZES:
                kernels[f"solution-page{ps}"] = (lambda args=inputs[ps]: solution.decode_attention(*args))
            kernels["sdpa-gathered"] = lambda: sdpa(q, gather(k, table, S), gather(v, table, S))
            kernels["sdpa-contiguous"] = lambda: sdpa(q, k_flat, v_flat)
            kernels["gather"] = lambda: (gather(k, table, S), gather(v, table, S))
            kernels["per-query-head"] = lambda: per_head_decode(q, k, v, table, lens)
            for ps in PAGE_SIZES:
                try:
                    kernels[f"flashinfer-page{ps}"] = flashinfer.decoder(*inputs[ps])
                except Exception as exc:
                    rows.append(failed_row(f"flashinfer-page{ps}", exc, **shape))
            want = sdpa(q.float(), k_flat.float(), v_flat.float())
            checked = {}
            for name, fn in kernels.items():
                if name == "gather":
                    continue
                out = fn()
                checked[name] = round((out.float() - want).abs().max().item(), 5)
            # The same calls replayed from a CUDA graph: no Python launcher between the kernels, which is
            # how inference servers run a decode step. The ``host-us`` rows say what the launcher costs.
            host = {name: bandwidth.host_us(kernels[name]) for name in GRAPHED if name in kernels}
            for name in GRAPHED:
                if name in kernels:
                    try:
                        kernels[f"{name}-graph"] = bandwidth.graphed(kernels[name])
                    except Exception as exc:
                        rows.append(failed_row(f"{name}-graph", exc, **shape))
            plain = torch.randn(moved // 4, device="cuda")  # the step's minimum bytes, read by one reduction
            kernels["read-same-bytes-graph"] = bandwidth.graphed(lambda: plain.sum())
            # The ceiling of a kernel that only reads: the copy and the add of the measured ceiling also
            # write, and a read-only kernel can beat them by a percent (SDPA at B 64 did). The fastest plain
            # read of the read-floor probe: one 8 KiB block per program, four warps.
            plain16 = torch.randn(moved // 2, device="cuda", dtype=torch.bfloat16)
            kernels["read-ceiling"] = read_ceiling_kernel(plain16)
            kernels["read-ceiling-graph"] = bandwidth.graphed(kernels["read-ceiling"])
            measured = _in_turns(kernels, rounds=3, moved=moved, ceiling=ceiling, **shape)
            rows += [{"kernel": f"host-us-{name}", **shape, "us": round(us, 1)} for name, us in host.items()]
            rows += clean_l2_rows(kernels, moved=moved, ceiling=ceiling, **shape)
            rows += in_graph_rows({**kernels, "read-same-bytes": lambda: plain.sum()}, moved=moved, ceiling=ceiling,
                                  **shape)
            of_read_ceiling(rows, B=B, ceiling=ceiling)
            for row in measured:
                row["max_abs_diff_vs_fp32_sdpa"] = checked.get(row["kernel"])
                if row["kernel"] == "gather":  # its own bytes: the cache read and written once
                    row["note"] = "bytes and fraction are the decode step's minimum, for comparison"
                if row["kernel"] == "per-query-head":
                    row["bytes_moved_by_schedule"] = per_query_head_bytes([S] * B, 0, 16, H_Q, H_KV, D, 2)
            rows += measured
            if flashinfer.compile_s is not None:
                rows.append({"kernel": "flashinfer-first-run", **shape,
                             "seconds": flashinfer.compile_s, "version": flashinfer.version})
        except Exception as exc:
            rows.append(failed_row("targets", exc, **shape))
        del inputs, kernels
        torch.cuda.empty_cache()
    return rows


def part_configs(ceiling: float) -> list[dict]:
    import solutions.ex08_decode as solution

    rows = []
    candidates = [("config-" + "-".join(map(str, c)), with_config(solution, c), list(c)) for c in CONFIGS]
    candidates += [("broadcast-" + "-".join(map(str, c)), broadcast_decode(c), list(c)) for c in BROADCAST_CONFIGS]
    for B, S in TARGETS:
        for ps in PAGE_SIZES:
            shape = dict(B=B, S_k=S, H_q=H_Q, H_kv=H_KV, D=D, dtype="bf16", page_size=ps)
            args = paged_inputs(B, S, ps, seed=B + ps)
            moved = nbytes(B, S, ps)
            default = list(solution._config(ps, D))
            want = solution.decode_attention(*args).float()
            results = []
            for name, fn, config in candidates:
                if _elapsed() > DEADLINE_S - 60:
                    rows.append({"kernel": name, **shape, "ms": None, "error": "skipped: time budget"})
                    continue
                try:
                    diff = (fn(*args).float() - want).abs().max().item()
                    pair = _in_turns({"config-default": lambda: solution.decode_attention(*args),
                                      name: lambda fn=fn: fn(*args)}, rounds=2, moved=moved, ceiling=ceiling, **shape)
                    base, row = pair
                    row.update(config=config, default_config=default, diff_vs_default=round(diff, 5),
                               ratio_to_default=round(base["ms"] / row["ms"], 4), default_fraction=base["fraction"])
                    rows.append(row)
                    results.append(row)
                except Exception as exc:
                    rows.append(failed_row(name, exc, **shape, config=config))
            good = [r for r in results if r["diff_vs_default"] < 2e-2]
            if good:
                best = max(good, key=lambda r: r["ratio_to_default"])
                rows.append({"kernel": "best-config", **shape, "config": best["config"], "variant": best["kernel"],
                             "ratio_to_default": best["ratio_to_default"], "fraction": best["fraction"],
                             "default_config": default})
            del args, want
            torch.cuda.empty_cache()
    return rows


def part_sweep(ceiling: float, flashinfer: FlashInfer) -> list[dict]:
    import solutions.ex08_decode as solution

    rows = []
    for B in SWEEP_B:
        for S in SWEEP_S:
            shape = dict(B=B, S_k=S, H_q=H_Q, H_kv=H_KV, D=D, dtype="bf16", page_size=16, sweep=True)
            if _elapsed() > DEADLINE_S:
                rows.append({"kernel": "solution", **shape, "ms": None, "error": "skipped: time budget"})
                continue
            try:
                args = paged_inputs(B, S, 16, seed=B * S)
                kernels = {"solution": lambda: solution.decode_attention(*args)}
                try:
                    kernels["flashinfer"] = flashinfer.decoder(*args)
                except Exception as exc:
                    if not flashinfer.error:
                        rows.append(failed_row("flashinfer", exc, **shape))
                rows += _in_turns(kernels, rounds=2, moved=nbytes(B, S, 16), ceiling=ceiling, **shape)
                del args, kernels
            except Exception as exc:
                rows.append(failed_row("solution", exc, **shape))
            torch.cuda.empty_cache()
    return rows


#: One transformer layer with Llama-3-8B's shapes (bf16): d_model, FFN width, heads.
MODEL = {"d_model": 4096, "ffn": 14336, "H_q": 32, "H_kv": 8, "D": 128, "layer": "Llama-3-8B shapes, one layer"}


def part_step(ceiling: float) -> list[dict]:
    """Amdahl for one decode step: each operator of one layer timed alone, attention by the solution."""
    import torch.nn.functional as F

    import solutions.ex08_decode as solution

    rows = []
    dm, ffn = MODEL["d_model"], MODEL["ffn"]
    dtype = torch.bfloat16
    weights = {
        "qkv": torch.randn(dm, (H_Q + 2 * H_KV) * D, device="cuda", dtype=dtype) * 0.02,
        "output": torch.randn(H_Q * D, dm, device="cuda", dtype=dtype) * 0.02,
        "gate_up": torch.randn(dm, 2 * ffn, device="cuda", dtype=dtype) * 0.02,
        "down": torch.randn(ffn, dm, device="cuda", dtype=dtype) * 0.02,
    }
    norm = torch.ones(dm, device="cuda", dtype=dtype)
    for B, S in ((1, 4096), (64, 4096), (1, 32768), (64, 32768)):
        shape = dict(B=B, S_k=S, **{k: v for k, v in MODEL.items()})
        try:
            x = torch.randn(B, dm, device="cuda", dtype=dtype)
            args = paged_inputs(B, S, 16, seed=7)
            h = torch.randn(B, 2 * ffn, device="cuda", dtype=dtype)
            a = torch.randn(B, ffn, device="cuda", dtype=dtype)
            ops = {  # name: (function, how many per layer, bytes of one)
                "rmsnorm": (lambda: F.rms_norm(x, (dm,), norm), 2, 2 * B * dm * 2 + dm * 2),
                "qkv_projection": (lambda: x @ weights["qkv"], 1, weights["qkv"].numel() * 2),
                "attention": (lambda: solution.decode_attention(*args), 1, nbytes(B, S, 16)),
                "output_projection": (lambda: args[0].reshape(B, -1) @ weights["output"], 1,
                                      weights["output"].numel() * 2),
                "gate_up_projection": (lambda: x @ weights["gate_up"], 1, weights["gate_up"].numel() * 2),
                "silu_mul": (lambda: F.silu(h[:, :ffn]) * h[:, ffn:], 1, 3 * B * ffn * 2),
                "down_projection": (lambda: a @ weights["down"], 1, weights["down"].numel() * 2),
                "residual_add": (lambda: x + x, 2, 3 * B * dm * 2),
            }
            total = 0.0
            measured = []
            for name, (fn, count, moved) in ops.items():
                ms = bandwidth.time_ms(fn) * count
                total += ms
                measured.append({"kernel": "step", "op": name, **shape, "ms": round(ms, 5), "count": count,
                                 "bytes": moved * count, "gbps": round(bandwidth.gbps(moved * count, ms), 1)})
            for row in measured:
                row["share"] = round(row["ms"] / total, 4)
            rows += measured
            rows.append({"kernel": "step-total", **shape, "ms": round(total, 5),
                         "attention_share": next(r["share"] for r in measured if r["op"] == "attention")})
            del x, args, h, a
        except Exception as exc:
            rows.append(failed_row("step", exc, **shape))
        torch.cuda.empty_cache()
    return rows


# --- driver ---------------------------------------------------------------------------------------

def run() -> list[dict]:
    """Every part, one list of rows (``python -m tools.benchmarks ex08_decode``)."""
    ceiling = bandwidth.measure_ceiling()[0].ceiling_gbps
    flashinfer = FlashInfer()
    rows = [{"kernel": "flashinfer-status", "ms": None, "version": flashinfer.version, "error": flashinfer.error}]
    for part in (part_check, lambda c: part_targets(c, flashinfer), part_configs,
                 lambda c: part_sweep(c, flashinfer), part_step):
        try:
            rows += part(ceiling)
        except Exception as exc:
            rows.append(failed_row("part", exc))
    return rows


def _summary(rows: list[dict]) -> str:
    lines = ["", "decode attention, H_q 32, H_kv 8, D 128, bf16 — % of the measured ceiling on the minimum bytes "
             "(targets: >= 85% at B 1, >= 90% at B 8 and B 64)"]
    targets = [r for r in rows if r.get("S_k") and not r.get("sweep") and "page_size" not in r
               and r.get("fraction") is not None and not str(r["kernel"]).startswith("step")]
    for B, S in TARGETS:
        cells = [f"{r['kernel']} {r['fraction']:.0%} ({r['ms'] * 1000:.1f} µs)" for r in targets
                 if r["B"] == B and r["S_k"] == S]
        lines.append(f"  B {B:>2} S_k {S:>5}: " + "; ".join(cells))
    best = [r for r in rows if r["kernel"] == "best-config"]
    for r in best:
        lines.append(f"  best at B {r['B']} S_k {r['S_k']} page {r['page_size']}: {r['variant']} "
                     f"{r['ratio_to_default']:.3f}x the default {r['default_config']} ({r['fraction']:.0%})")
    errors = [r for r in rows if r.get("error") and r["kernel"] != "flashinfer-status"]
    status = next((r for r in rows if r["kernel"] == "flashinfer-status"), {})
    lines.append(f"  flashinfer: {status.get('version') or 'not available'}"
                 + (f" — {status['error']}" if status.get("error") else ""))
    for r in errors[:8]:
        lines.append(f"  error: {r['kernel']}: {r['error'][:160]}")
    steps = [r for r in rows if r["kernel"] == "step-total"]
    for r in steps:
        lines.append(f"  decode step, one layer, B {r['B']} S_k {r['S_k']}: {r['ms'] * 1000:.0f} µs, attention "
                     f"{r['attention_share']:.0%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="exercise 8 on a GPU: every part, results written as they come")
    parser.add_argument("--out", type=Path, default=Path("build/measurements"))
    parser.add_argument("--prefix", default=None)
    parser.add_argument("--parts", default="check,targets,configs,sweep,step")
    args = parser.parse_args(argv)
    header = meta()
    prefix = args.prefix or header["gpu"].lower().replace("nvidia", "").strip().replace(" ", "-")
    args.out.mkdir(parents=True, exist_ok=True)
    main_path = args.out / f"{prefix}-ex08-decode.json"
    step_path = args.out / f"{prefix}-ex08-decode-step.json"
    ceiling = header["ceiling_gbps"]
    flashinfer = FlashInfer()
    rows = [{"kernel": "flashinfer-status", "ms": None, "version": flashinfer.version, "error": flashinfer.error}]
    steps: list[dict] = []
    parts = {"check": part_check, "targets": lambda c: part_targets(c, flashinfer), "configs": part_configs,
             "sweep": lambda c: part_sweep(c, flashinfer), "step": part_step}

    def write():
        command = "PYTHONPATH=. python -m tools.benchmarks.ex08_decode --out DIR"
        record = {"meta": {**header, "exercise": 8, "command": command, "seconds": round(_elapsed(), 1)}, "rows": rows}
        main_path.write_text(json.dumps(record, indent=1) + "\n")
        if steps:
            step_path.write_text(json.dumps({"meta": {**header, "command": command, "model": MODEL},
                                             "rows": steps}, indent=1) + "\n")

    for name in args.parts.split(","):
        started = time.time()
        try:
            produced = parts[name](ceiling)
        except Exception as exc:  # one broken part must not lose the others' numbers
            produced = [failed_row(f"part {name}", exc)]
        (steps if name == "step" else rows).extend(produced)
        print(f"{name}: {len(produced)} rows in {time.time() - started:.0f} s (total {_elapsed():.0f} s)", flush=True)
        write()
    print(_summary(rows + steps))
    print(f"\nwritten: {main_path} {step_path if steps else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
