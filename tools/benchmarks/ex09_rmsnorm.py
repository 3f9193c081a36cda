"""Exercise 9 on a GPU: RMSNorm forward and backward against eager PyTorch, torch.compile and
Liger-Kernel, the configuration sweeps behind the solution's choices, and Amdahl's Law on a
training step of the course's block.

Parts, each in its own try/except (a failure is a row with an ``error``, the other parts still
run), the JSON file rewritten after each part:

* ``peers`` — M = 16384 rows of N = 1024 ... 16384 bf16 (fresh random data; 32 to 512 MiB per
  tensor, beyond the L2 from N = 1024 on for the pair). For each N, in turns (``ROUNDS`` medians
  each, `grader.bandwidth.time_in_turns`): the forward (``op = fwd``), the backward alone (``bwd``,
  ``torch.autograd.grad`` with ``retain_graph`` for the peers; the solution's
  ``rmsnorm_backward`` called directly, as the grader times it) and forward + backward through
  autograd (``fwdbwd``), for ``solution``, ``eager`` (``torch.nn.functional.rms_norm``),
  ``compile`` (``torch.compile(dynamic=False)`` of the same function, compiled afresh per shape)
  and ``liger`` (``LigerRMSNormFunction``, its defaults: "llama" casting, dx written into dy).
  Bytes are the spec's minima: `forward_bytes`, `backward_minimum_bytes` and their sum; every
  kernel is credited with the same bytes, so ``fraction`` compares times.
  The forward and forward + backward are timed a second time as CUDA-graph replays (``solution-graph``,
  ``compile-graph``, …; `grader.bandwidth.graphed`), in turns, each row with its launcher's CPU µs per call
  (``host_us``, `grader.bandwidth.host_us`): where a call's CPU cost exceeds its kernels' time, the first
  timing measures Python and the replay measures the kernels.
* ``fp32`` — the same at N = 4096 in float32, forward and forward + backward.
* ``fwd-sweep`` — the solution's forward kernel with 1 to 16 warps at every N (bf16): the
  ``forward_num_warps`` choice.
* ``fwd-rows`` — the forward with 2 and 4 rows per program (as many as fit in 16384 values) on 4 and 8
  warps, beside one row: the ``forward_rows`` choice.
* ``bwd-sweep`` — the solution's backward with 4, 8, 16 and 32 warps and 1, 2, 4 and 8 programs
  per SM at N = 1024, 4096 and 16384 (bf16): ``backward_num_warps`` and ``PROGRAMS_PER_SM``; and,
  with the solution's own configuration, ``w hoisted``: the same kernel loading the weights once per
  program and keeping them in registers, where the solution loads them in every iteration (at
  N = 16384 the weights, x, dy and the running sum held at once are 256 KiB per program, the whole
  register file of an SM: hoisting w costs spills).
* ``step`` — Amdahl on a training step (forward and backward, no optimizer) of a stack of
  ``grader.exercises._shared.model.Block`` with RMSNorm in place of its LayerNorms, bf16: with eager
  ``F.rms_norm`` and with the solution (in turns); the norms' share f from a ``torch.profiler``
  profile of the eager step and, separately, from the norms timed alone; the local speedup s of
  the norms alone; the predicted 1 / ((1 - f) + f / s) beside the measured speedup.

Before it is timed, every kernel's output is compared with a float64 reference on a few rows
(``max_rel_err``, relative to the largest value; dweight in full, against a float32 sum).

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl   # Liger, if there
    PYTHONPATH=.:/tmp/site python3 -m tools.benchmarks.ex09_rmsnorm --out DIR

writes ``DIR/<gpu>-ex09-rmsnorm.json`` (e.g. ``h200-ex09-rmsnorm.json``) and prints a table;
``python -m tools.benchmarks ex09_rmsnorm`` (the driver) runs the same parts and writes the file
at the end. ``meta.seconds_by_part`` of the committed file says how long each part took on the H200,
most of it torch.compile and the sweeps' compilations; ``--budget`` (seconds, default 200) skips the parts that
would start after it, each with a row that says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from grader import bandwidth
from grader.exercises.ex09_rmsnorm.spec import backward_minimum_bytes, forward_bytes

M = 16384
NS = (1024, 2048, 4096, 8192, 16384)
FP32_N = 4096
EPS = 1e-6
ROUNDS = 3
REP_MS = 100
SWEEP_ROUNDS = 2
SWEEP_REP_MS = 50
FWD_WARPS = (1, 2, 4, 8, 16)
FWD_ROWS = (2, 4)
BWD_WARPS = (4, 8, 16, 32)
BWD_PER_SM = (1, 2, 4, 8)
BWD_SWEEP_NS = (1024, 4096, 16384)
PEERS = ("solution", "eager", "compile", "liger")
#: The training step: a stack of grader.exercises._shared.model.Block, RMSNorm in place of LayerNorm, bf16.
STEP = {"blocks": 4, "d_model": 1024, "n_heads": 8, "mlp_ratio": 4, "batch": 32, "seq": 512}
#: No part starts after this many seconds (the whole run must stay within about four minutes).
BUDGET_S = 200
#: In this order: what the chapter quotes first, so a run that hits the budget loses the least.
PARTS = ("peers", "step", "bwd-sweep", "fwd-sweep", "fwd-rows", "fp32")
DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}
#: Where the tensors live (the course's tests run the parts on the CPU, in Triton's interpreter).
DEVICE = "cuda"


# --- the contenders -------------------------------------------------------------------------------

def solution():
    import solutions.ex09_rmsnorm as module

    return module


class SolutionRMSNorm(torch.autograd.Function):
    """The solution's pair as an autograd function: forward saves x, weight and rstd."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        y, rstd = solution().rmsnorm_forward(x, weight, eps)
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        if dy.stride(-1) != 1:  # the contract: rows contiguous along a row (any row stride)
            dy = dy.contiguous()
        dx, dweight = solution().rmsnorm_backward(dy, x, weight, rstd)
        return dx, dweight, None


def liger_function() -> tuple[Callable | None, str | None]:
    """Liger-Kernel's RMSNorm autograd function, or None and the exact reason it cannot run."""
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    except Exception as exc:  # not installed, or it does not import on this torch/Triton
        return None, f"liger_kernel could not be imported: {type(exc).__name__}: {exc}"
    return LigerRMSNormFunction, None


def _eager(n: int) -> Callable:
    return lambda x, w: F.rms_norm(x, (n,), w, EPS)


def _compiled(n: int) -> Callable:
    """A fresh torch.compile per shape (dynamic=False): past dynamo's recompile limit it would fall back
    to eager, and a dynamic kernel is not what a fixed-shape training run gets.

    Donated buffers are off: with them, AOTAutograd refuses a backward run with ``retain_graph=True``,
    which is how the backward alone is timed (they let the backward reuse saved tensors' memory for
    its outputs; they do not change the bytes its kernels move)."""
    import torch._dynamo
    import torch._functorch.config

    torch._functorch.config.donated_buffer = False
    torch._dynamo.reset()
    return torch.compile(_eager(n), dynamic=False)


def forward_callables(n: int, liger, liger_reason: str | None) -> dict[str, tuple[Callable | None, str | None]]:
    """name -> (f(x, w) returning y, None), or (None, why it cannot run here), for every contender."""
    try:
        compiled, why = _compiled(n), None
    except Exception as exc:
        compiled, why = None, f"torch.compile could not be set up: {type(exc).__name__}: {exc}"
    return {
        "solution": (lambda x, w: SolutionRMSNorm.apply(x, w, EPS), None),
        "eager": (_eager(n), None),
        "compile": (compiled, why),
        "liger": (None, liger_reason) if liger is None else (lambda x, w: liger.apply(x, w, EPS), None),
    }


# --- inputs and references ------------------------------------------------------------------------

def make_inputs(m: int, n: int, dtype: torch.dtype, seed: int):
    """x (normal), weight (1 + 0.01 · normal: Liger writes dx into dy in place, and with weights near 1
    repeated backward calls keep dy's magnitude), dy (normal)."""
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    x = torch.randn(m, n, device=DEVICE, dtype=dtype, generator=gen)
    w = (1 + 0.01 * torch.randn(n, device=DEVICE, generator=gen)).to(dtype)
    dy = torch.randn(m, n, device=DEVICE, dtype=dtype, generator=gen)
    return x, w, dy


def sample_rows(m: int) -> list[int]:
    return sorted({0, 1, m // 3, m // 2, m - 1})


def reference(x, w, dy, rows):
    """float64 y and dx on ``rows``; dweight over all rows in float32 (a float64 copy would not fit)."""
    x64, w64, dy64 = x[rows].double(), w.double(), dy[rows].double()
    rstd = 1.0 / torch.sqrt((x64 * x64).mean(dim=1, keepdim=True) + EPS)
    x_hat = x64 * rstd
    g = dy64 * w64
    dx = rstd * (g - x_hat * (x_hat * g).mean(dim=1, keepdim=True))
    rstd32 = torch.rsqrt(x.float().pow(2).mean(dim=1, keepdim=True) + EPS)
    dw = (dy.float() * x.float() * rstd32).sum(dim=0).double()
    return x_hat * w64, dx, dw


def rel_err(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got.double() - want).abs().max() / want.abs().max().clamp_min(1e-30))


# --- timing ---------------------------------------------------------------------------------------

def ceiling_gbps() -> float:
    return bandwidth.measure_ceiling()[0].ceiling_gbps


def timed_rows(kernels: dict[str, Callable], *, rounds: int, rep_ms: int, nbytes: int, **fields) -> list[dict]:
    """One row per kernel, timed in turns; ``ms`` is the median of its rounds."""
    ceiling = ceiling_gbps()
    rows = []
    for name, times in bandwidth.time_in_turns(kernels, rounds=rounds, rep_ms=rep_ms).items():
        ms = statistics.median(times)
        gbps = bandwidth.gbps(nbytes, ms)
        rows.append({**fields, "kernel": name, "ms": round(ms, 5), "ms_runs": [round(t, 5) for t in times],
                     "bytes": nbytes, "gbps": round(gbps, 1), "fraction": round(gbps / ceiling, 4)})
    return rows


def error_row(exc: BaseException, **fields) -> dict:
    return {**fields, "ms": None, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}


# --- part: peers (and fp32) -----------------------------------------------------------------------

def peer_rows(m: int, n: int, dtype: torch.dtype, liger, liger_reason: str | None, *, ops=("fwd", "bwd", "fwdbwd"),
              rounds: int = ROUNDS, rep_ms: int = REP_MS, seed: int = 0) -> list[dict]:
    """Every contender at one shape: checked, then timed in turns per op."""
    base = {"M": m, "N": n, "dtype": DTYPES[dtype]}
    x, w, dy = make_inputs(m, n, dtype, seed)
    rows_checked = sample_rows(m)
    want_y, want_dx, want_dw = reference(x, w, dy, rows_checked)
    sizes = {"fwd": forward_bytes(m, n, x.element_size()), "bwd": backward_minimum_bytes(m, n, x.element_size())}
    sizes["fwdbwd"] = sizes["fwd"] + sizes["bwd"]
    out: list[dict] = []
    fns = forward_callables(n, liger, liger_reason)
    kernels = {op: {} for op in ops}
    notes = {}
    for name in PEERS:
        fn, reason = fns[name]
        if fn is None:
            for op in ops:
                out.append({"part": "peers", "op": op, "kernel": name, **base, "ms": None, "error": reason})
            continue
        try:
            xr = x.detach().clone().requires_grad_(True)
            wr = w.detach().clone().requires_grad_(True)
            y = fn(xr, wr)
            dy_copy = dy.clone()  # Liger writes dx into the dy it is given
            dx, dw = torch.autograd.grad(y, (xr, wr), dy_copy, retain_graph=True)
            notes[name] = {"max_rel_err": {"y": round(rel_err(y.detach()[rows_checked], want_y), 6),
                                           "dx": round(rel_err(dx[rows_checked], want_dx), 6),
                                           "dweight": round(rel_err(dw, want_dw), 6)}}
        except Exception as exc:
            for op in ops:
                out.append(error_row(exc, part="peers", op=op, kernel=name, **base))
            continue
        if "fwd" in kernels:
            if name == "solution":
                sol = solution()
                kernels["fwd"][name] = lambda: sol.rmsnorm_forward(x, w, EPS)
            else:
                def forward_only(fn=fn):
                    with torch.no_grad():
                        return fn(x, w)
                kernels["fwd"][name] = forward_only
        if "bwd" in kernels:
            if name == "solution":
                sol = solution()
                rstd = torch.rsqrt(x.float().pow(2).mean(dim=1) + EPS)
                kernels["bwd"][name] = lambda sol=sol, rstd=rstd: sol.rmsnorm_backward(dy, x, w, rstd)
            else:
                kernels["bwd"][name] = lambda y=y, xr=xr, wr=wr: torch.autograd.grad(y, (xr, wr), dy,
                                                                                     retain_graph=True)
        if "fwdbwd" in kernels:
            def step(fn=fn):
                xg = x.detach().requires_grad_(True)
                wg = w.detach().requires_grad_(True)
                return torch.autograd.grad(fn(xg, wg), (xg, wg), dy)
            kernels["fwdbwd"][name] = step
    for op in ops:
        if not kernels[op]:
            continue
        try:
            for row in timed_rows(kernels[op], rounds=rounds, rep_ms=rep_ms, nbytes=sizes[op], part="peers", op=op,
                                  **base):
                row.update(notes.get(row["kernel"], {}))
                out.append(row)
        except Exception as exc:
            out.append(error_row(exc, part="peers", op=op, kernel="(timing)", **base))
        if op in GRAPHED_OPS:
            out.extend(graph_rows(kernels[op], op=op, rounds=rounds, rep_ms=rep_ms, nbytes=sizes[op], **base))
    del x, w, dy
    _free()
    return out


#: The ops also timed as CUDA-graph replays (``NAME-graph`` rows), with each launcher's CPU cost (``host_us``).
#: At N = 1024 a forward moves 64 MB, about 20 µs of HBM time, while one Triton launch from Python costs
#: 25 µs of CPU and torch.compile's wrapper about 50: timed from Python, the launcher decides the figure.
GRAPHED_OPS = ("fwd", "fwdbwd")


def graph_rows(kernels: dict[str, Callable], *, op: str, rounds: int, rep_ms: int, nbytes: int, **base) -> list[dict]:
    """The same contenders replayed from a CUDA graph, in turns, each row with its launcher's CPU µs per call."""
    replays, out = {}, []
    for name, fn in kernels.items():
        try:
            host = round(bandwidth.host_us(fn), 1)
            replays[f"{name}-graph"] = (bandwidth.graphed(fn), host)
        except Exception as exc:  # a contender whose call cannot be captured (a host sync inside it)
            out.append(error_row(exc, part="peers", op=op, kernel=f"{name}-graph", **base))
    if replays:
        try:
            rows = timed_rows({k: v[0] for k, v in replays.items()}, rounds=rounds, rep_ms=rep_ms, nbytes=nbytes,
                              part="peers", op=op, **base)
            for row in rows:
                row["host_us"] = replays[row["kernel"]][1]
            out.extend(rows)
        except Exception as exc:
            out.append(error_row(exc, part="peers", op=op, kernel="(graph timing)", **base))
    return out


def _free() -> None:
    if DEVICE == "cuda":
        torch.cuda.empty_cache()


# --- parts: the sweeps ----------------------------------------------------------------------------

def forward_with(x, w, num_warps: int, rows: int = 1):
    sol = solution()
    m, n = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty(m, dtype=torch.float32, device=x.device)
    block = 1 << (n - 1).bit_length()
    sol.rmsnorm_forward_kernel[(-(-m // rows),)](x, w, y, rstd, x.stride(0), y.stride(0), m, n, EPS, ROWS=rows,
                                                 BLOCK=block, num_warps=num_warps)
    return y, rstd


def backward_with(dy, x, w, rstd, num_warps: int, per_sm: int, *, w_hoisted: bool = False):
    sol = solution()
    m, n = x.shape
    dx = torch.empty_like(x)
    dweight = torch.empty_like(w)
    num_sms = sol.sm_count(x.device)
    n_partials = sol.partial_count(m, num_sms, per_sm)
    partials = torch.empty((n_partials, n), dtype=torch.float32, device=x.device)
    block = 1 << (n - 1).bit_length()
    kernel = backward_kernel_w_hoisted if w_hoisted else sol.rmsnorm_backward_kernel
    kernel[(n_partials,)](dy, x, w, rstd, dx, partials, dy.stride(0), x.stride(0), dx.stride(0), m, n,
                          -(-m // n_partials), BLOCK=block, num_warps=num_warps)
    block_p, block_n = sol.reduce_tile(n, num_sms)
    sol.dweight_reduce_kernel[(-(-n // block_n),)](partials, dweight, n_partials, n, BLOCK_P=block_p,
                                                   BLOCK_N=block_n)
    return dx, dweight


@triton.jit
def backward_kernel_w_hoisted(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, partial_ptr, dy_row_stride, x_row_stride,
                              dx_row_stride, n_rows, n_cols, rows_per_program, BLOCK: tl.constexpr):
    """The solution's row kernel with the weights loaded once per program and kept in registers."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    row_start = pid.to(tl.int64) * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    for row in tl.range(row_start, row_end):
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        x_hat = x * rstd
        g = dy * w
        c = tl.sum(x_hat * g, axis=0) / n_cols
        tl.store(dx_ptr + row * dx_row_stride + cols, ((g - x_hat * c) * rstd).to(dx_ptr.dtype.element_ty),
                 mask=mask)
        dw += dy * x_hat
    tl.store(partial_ptr + pid.to(tl.int64) * n_cols + cols, dw, mask=mask)


def fwd_sweep_rows(ns=NS, m: int = M, dtype=torch.bfloat16) -> list[dict]:
    """``fwd-sweep``: one row per program, 1 to 16 warps (``forward_num_warps``)."""
    return _forward_sweep("fwd-sweep", ns, m, dtype, lambda block: [(1, warps) for warps in FWD_WARPS])


def fwd_rows_rows(ns=NS, m: int = M, dtype=torch.bfloat16) -> list[dict]:
    """``fwd-rows``: 1, 2 and 4 rows per program (``forward_rows``), as many as fit in 16384 values, on 4 and 8
    warps, beside the solution's one-row configuration."""
    sol = solution()

    def configs(block: int) -> list[tuple[int, int]]:
        one_row = (1, sol.forward_num_warps(block, 2))
        return [one_row] + [(rows, warps) for rows in FWD_ROWS if rows * block <= sol.MAX_COLS
                            for warps in (4, 8) if (rows, warps) != one_row]
    return _forward_sweep("fwd-rows", ns, m, dtype, configs)


def _forward_sweep(part: str, ns, m: int, dtype, configs: Callable[[int], list[tuple[int, int]]]) -> list[dict]:
    """The solution's forward kernel in each (rows per program, warps) of ``configs(block)``, checked, then timed
    in turns; ``default`` marks the solution's own choice."""
    sol = solution()
    out = []
    for n in ns:
        base = {"part": part, "M": m, "N": n, "dtype": DTYPES[dtype]}
        x, w, _ = make_inputs(m, n, dtype, seed=1)
        rows_checked = sample_rows(m)
        want_y = reference(x, w, x, rows_checked)[0]
        block = 1 << (n - 1).bit_length()
        default_rows = sol.forward_rows(block)
        default = (default_rows, sol.forward_num_warps(block, x.element_size(), default_rows))
        kernels, chosen = {}, {}
        for rows, warps in configs(block):
            name = f"warps{warps}" if part == "fwd-sweep" else f"rows{rows}-warps{warps}"
            try:
                y, _ = forward_with(x, w, warps, rows)
                err = rel_err(y[rows_checked], want_y)
                if err > 5e-2:
                    raise RuntimeError(f"wrong result (max relative error {err:.3g})")
                kernels[name] = lambda warps=warps, rows=rows: forward_with(x, w, warps, rows)
                chosen[name] = (rows, warps)
            except Exception as exc:
                out.append(error_row(exc, kernel=name, num_warps=warps, rows_per_program=rows, **base))
        try:
            for row in timed_rows(kernels, rounds=SWEEP_ROUNDS, rep_ms=SWEEP_REP_MS, nbytes=forward_bytes(m, n, 2),
                                  **base):
                rows, warps = chosen[row["kernel"]]
                row.update(num_warps=warps, rows_per_program=rows, default=(rows, warps) == default)
                out.append(row)
        except Exception as exc:
            out.append(error_row(exc, kernel="(timing)", **base))
        del x, w
    _free()
    return out


def bwd_sweep_rows(ns=BWD_SWEEP_NS, m: int = M, dtype=torch.bfloat16) -> list[dict]:
    sol = solution()
    out = []
    for n in ns:
        base = {"part": "bwd-sweep", "M": m, "N": n, "dtype": DTYPES[dtype]}
        x, w, dy = make_inputs(m, n, dtype, seed=2)
        rstd = torch.rsqrt(x.float().pow(2).mean(dim=1) + EPS)
        rows_checked = sample_rows(m)
        _, want_dx, want_dw = reference(x, w, dy, rows_checked)
        default = (sol.backward_num_warps(1 << (n - 1).bit_length(), x.element_size()), sol.PROGRAMS_PER_SM)
        kernels = {}
        for warps in BWD_WARPS:
            for per_sm in BWD_PER_SM:
                name = f"warps{warps}-per_sm{per_sm}"
                try:
                    dx, dw = backward_with(dy, x, w, rstd, warps, per_sm)
                    err = max(rel_err(dx[rows_checked], want_dx), rel_err(dw, want_dw))
                    if err > 5e-2:
                        raise RuntimeError(f"wrong result (max relative error {err:.3g})")
                    kernels[name] = lambda warps=warps, per_sm=per_sm: backward_with(dy, x, w, rstd, warps, per_sm)
                except Exception as exc:
                    out.append(error_row(exc, kernel=name, num_warps=warps, programs_per_sm=per_sm, **base))
        try:
            dx, dw = backward_with(dy, x, w, rstd, *default, w_hoisted=True)
            err = max(rel_err(dx[rows_checked], want_dx), rel_err(dw, want_dw))
            if err > 5e-2:
                raise RuntimeError(f"wrong result (max relative error {err:.3g})")
            kernels["w hoisted"] = lambda: backward_with(dy, x, w, rstd, *default, w_hoisted=True)
        except Exception as exc:
            out.append(error_row(exc, kernel="w hoisted", **base))
        try:
            for row in timed_rows(kernels, rounds=SWEEP_ROUNDS, rep_ms=SWEEP_REP_MS,
                                  nbytes=backward_minimum_bytes(m, n, 2), **base):
                if row["kernel"] == "w hoisted":
                    warps, per_sm = default
                else:
                    warps, per_sm = row["kernel"].removeprefix("warps").split("-per_sm")
                row.update(num_warps=int(warps), programs_per_sm=int(per_sm),
                           n_partials=sol.partial_count(m, sol.sm_count(x.device), int(per_sm)))
                row["default"] = row["kernel"] != "w hoisted" and (row["num_warps"], row["programs_per_sm"]) == default
                out.append(row)
        except Exception as exc:
            out.append(error_row(exc, kernel="(timing)", **base))
        del x, w, dy
    _free()
    return out


# --- part: Amdahl on a training step ---------------------------------------------------------------

class Norm(torch.nn.Module):
    """RMSNorm over the last dimension with a learned weight, by ``impl`` ("eager" or "solution")."""

    def __init__(self, d: int, impl: str):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.impl = impl

    def forward(self, x):
        if self.impl == "eager":
            return F.rms_norm(x, (x.shape[-1],), self.weight, EPS)
        rows = x.reshape(-1, x.shape[-1])
        return SolutionRMSNorm.apply(rows, self.weight, EPS).reshape(x.shape)


def make_stack(impl: str, *, blocks: int, d_model: int, n_heads: int, mlp_ratio: int, seed: int = 0):
    from grader.exercises._shared import model

    torch.manual_seed(seed)
    stack = torch.nn.Sequential(*[model.Block(d_model, n_heads, mlp_ratio) for _ in range(blocks)])
    for block in stack:
        block.ln1, block.ln2 = Norm(d_model, impl), Norm(d_model, impl)
    return stack.to(device=DEVICE, dtype=torch.bfloat16).train()


def step_rows(config: dict = STEP) -> list[dict]:
    from grader.exercises._shared import profiling

    blocks, d, heads, ratio, batch, seq = (config[k] for k in ("blocks", "d_model", "n_heads", "mlp_ratio",
                                                                  "batch", "seq"))
    tokens = batch * seq
    base = {"part": "step", **config, "tokens": tokens, "dtype": "bf16"}
    stacks = {impl: make_stack(impl, blocks=blocks, d_model=d, n_heads=heads, mlp_ratio=ratio)
              for impl in ("eager", "solution")}
    stacks["solution"].load_state_dict(stacks["eager"].state_dict())
    gen = torch.Generator(device=DEVICE).manual_seed(3)
    x = torch.randn(batch, seq, d, device=DEVICE, dtype=torch.bfloat16, generator=gen)
    grad = torch.randn(batch, seq, d, device=DEVICE, dtype=torch.bfloat16, generator=gen)

    def step(stack):
        def run():
            for p in stack.parameters():
                p.grad = None
            stack(x).backward(grad)
        return run

    steps = {impl: step(stack) for impl, stack in stacks.items()}
    for run in steps.values():
        run()
    # The same weights and inputs: the two steps' gradients agree to bf16 rounding.
    grads = [torch.cat([p.grad.float().flatten() for p in stacks[impl].parameters()]) for impl in ("eager", "solution")]
    grad_err = float((grads[0] - grads[1]).abs().max() / grads[0].abs().max())
    del grads
    out = []
    timed = timed_rows(steps, rounds=ROUNDS, rep_ms=200, nbytes=1, **base)
    for row in timed:
        for key in ("bytes", "gbps", "fraction"):
            row.pop(key)
        out.append(row)
    step_ms = {row["kernel"]: row["ms"] for row in timed}

    # The norms alone, at the block's shape: one forward and backward each, in turns.
    nx, nw, ndy = make_inputs(tokens, d, torch.bfloat16, seed=4)
    norm_kernels = {}
    for impl in ("eager", "solution"):
        fn = _eager(d) if impl == "eager" else (lambda a, b: SolutionRMSNorm.apply(a, b, EPS))

        def norm_step(fn=fn):
            xg = nx.detach().requires_grad_(True)
            wg = nw.detach().requires_grad_(True)
            return torch.autograd.grad(fn(xg, wg), (xg, wg), ndy)
        norm_kernels[impl] = norm_step
    norm_bytes = forward_bytes(tokens, d, 2) + backward_minimum_bytes(tokens, d, 2)
    norm_rows = timed_rows(norm_kernels, rounds=ROUNDS, rep_ms=REP_MS, nbytes=norm_bytes, **{**base, "part": "step-norm"})
    out += norm_rows
    norm_ms = {row["kernel"]: row["ms"] for row in norm_rows}
    n_norms = 2 * blocks

    # The eager step's profile: the norms' share of the kernel time (its forward and backward operators).
    profile = training_profile(steps["eager"], iterations=5)
    total = profiling.total_us(profile)
    norm_us = sum(r["device_time_us"] for r in profile if "rms_norm" in r["name"].lower())
    # None (not 0) when no operator of the profile is named after rms_norm: then eager PyTorch ran the
    # norm as separate elementwise operators and the profile cannot tell them apart from the block's.
    f_profile = norm_us / total if total and norm_us else None
    f_timed = n_norms * norm_ms["eager"] / step_ms["eager"]
    s = norm_ms["eager"] / norm_ms["solution"]

    def amdahl(f):
        return None if f is None else 1.0 / ((1.0 - f) + f / s)

    measured = step_ms["eager"] / step_ms["solution"]
    out.append({**base, "part": "amdahl", "kernel": "summary", "norms_per_step": n_norms,
                "step_ms_eager": step_ms["eager"], "step_ms_solution": step_ms["solution"],
                "norm_ms_eager": norm_ms["eager"], "norm_ms_solution": norm_ms["solution"],
                "norm_fraction_profile": None if f_profile is None else round(f_profile, 5),
                "norm_fraction_timed": round(f_timed, 5), "local_speedup": round(s, 4),
                "predicted_speedup_profile": None if f_profile is None else round(amdahl(f_profile), 5),
                "predicted_speedup_timed": round(amdahl(f_timed), 5), "measured_speedup": round(measured, 5),
                "ceiling_profile": None if f_profile is None else round(1.0 / (1.0 - f_profile), 5),
                "gradient_max_rel_diff": round(grad_err, 6),
                "profile_top": sorted(profile, key=lambda r: -r["device_time_us"])[:12],
                "profile_norm_rows": [r for r in profile if "rms_norm" in r["name"].lower()]})
    return out


def training_profile(fn: Callable[[], object], *, iterations: int, warmup: int = 2) -> list[dict]:
    """`grader.exercises._shared.profiling`'s rows (GPU time per operator, per call) for a function that runs a backward:
    `profiling.profile` runs under inference_mode, where autograd records nothing."""
    from torch.profiler import ProfilerActivity, profile

    from grader.exercises._shared import profiling

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(iterations):
            fn()
        torch.cuda.synchronize()  # the last kernels must finish inside the window
    return profiling.per_pass(profiling.device_rows(list(prof.events())), iterations)


# --- the run --------------------------------------------------------------------------------------

class Results:
    """Rows, written to ``path`` (when given) after every part, so a later failure loses nothing."""

    def __init__(self, path: Path | None, meta: dict):
        self.path, self.meta, self.rows = path, meta, []

    def add(self, rows: list[dict]) -> None:
        self.rows += rows
        self.flush()

    def flush(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"meta": self.meta, "rows": self.rows}, indent=1) + "\n")
        os.replace(tmp, self.path)


def run_parts(results: Results, parts=PARTS, *, budget_s: float = BUDGET_S) -> None:
    started = time.time()
    liger, liger_reason = liger_function()
    results.meta["liger"] = liger_reason or _liger_version()
    results.flush()

    def over_budget(part: str) -> bool:
        if time.time() - started <= budget_s:
            return False
        results.add([{"part": part, "kernel": "(skipped)", "ms": None,
                      "error": f"skipped: {time.time() - started:.0f} s had passed, over the {budget_s:.0f} s budget"}])
        return True

    makers = {
        "peers": lambda: [("peers", lambda n=n: peer_rows(M, n, torch.bfloat16, liger, liger_reason)) for n in NS],
        "step": lambda: [("step", step_rows)],
        "bwd-sweep": lambda: [("bwd-sweep", bwd_sweep_rows)],
        "fwd-sweep": lambda: [("fwd-sweep", fwd_sweep_rows)],
        "fwd-rows": lambda: [("fwd-rows", fwd_rows_rows)],
        "fp32": lambda: [("fp32", lambda: [dict(r, part="fp32") for r in peer_rows(
            M, FP32_N, torch.float32, liger, liger_reason, ops=("fwd", "fwdbwd"))])],
    }
    jobs = [job for part in PARTS if part in parts for job in makers[part]()]
    for part, job in jobs:
        if over_budget(part):
            continue
        t = time.time()
        try:
            rows = job()
        except Exception as exc:  # one broken part must not lose the others' numbers
            rows = [error_row(exc, part=part, kernel="(part)")]
        results.meta.setdefault("seconds_by_part", {}).setdefault(part, 0.0)
        results.meta["seconds_by_part"][part] = round(results.meta["seconds_by_part"][part] + time.time() - t, 1)
        results.add(rows)
    results.meta["seconds"] = round(time.time() - started, 1)
    results.flush()


def _liger_version() -> str:
    try:
        from importlib.metadata import version

        return f"liger_kernel {version('liger_kernel')}"
    except Exception:
        return "liger_kernel (version unknown)"


def run() -> list[dict]:
    """For ``python -m tools.benchmarks ex09_rmsnorm``: every part, the rows at the end."""
    results = Results(None, {})
    run_parts(results)
    return results.rows


def table(rows: list[dict]) -> str:
    """The short table printed last: fraction of the ceiling per op, kernel and N."""
    lines = ["op            N      " + "  ".join(f"{k:>9}" for k in PEERS)]
    for part in ("peers", "fp32"):
        for op in ("fwd", "bwd", "fwdbwd"):
            for n in sorted({r["N"] for r in rows if r.get("part") == part and "N" in r}):
                cells = {r["kernel"]: r for r in rows if r.get("part") == part and r.get("op") == op and r.get("N") == n}
                if not cells:
                    continue
                for suffix in ("", "-graph"):
                    if not any(k + suffix in cells for k in PEERS):
                        continue
                    shown = [f"{cells[k + suffix]['fraction']:9.1%}" if cells.get(k + suffix, {}).get("fraction")
                             is not None else f"{'-':>9}" for k in PEERS]
                    label = op + (" f32" if part == "fp32" else "") + (" graph" if suffix else "")
                    lines.append(f"{label:<13} {n:<6} " + "  ".join(shown))
    for r in rows:
        if r.get("part") == "amdahl":
            lines.append(f"step: f = {r['norm_fraction_profile']} (profile) / {r['norm_fraction_timed']} (timed), "
                         f"s = {r['local_speedup']}, predicted {r['predicted_speedup_profile']} / "
                         f"{r['predicted_speedup_timed']}, measured {r['measured_speedup']}")
    for part in ("fwd-sweep", "fwd-rows", "bwd-sweep"):
        for n in sorted({r["N"] for r in rows if r.get("part") == part and "N" in r}):
            cands = [r for r in rows if r.get("part") == part and r.get("N") == n and r.get("fraction") is not None]
            if cands:
                best = max(cands, key=lambda r: r["fraction"])
                chosen = next((r for r in cands if r.get("default")), None)
                lines.append(f"{part} N={n}: best {best['kernel']} {best['fraction']:.1%}; default "
                             f"{chosen['kernel'] + ' ' + format(chosen['fraction'], '.1%') if chosen else '-'}")
    errors = [r for r in rows if r.get("error")]
    lines.append(f"{len(errors)} rows with an error" + (f" (first: {errors[0]['part']} {errors[0].get('kernel')}: "
                                                        f"{errors[0]['error'][:120]})" if errors else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmarks.ex09_rmsnorm")
    parser.add_argument("--out", default="build/measurements", help="folder for the JSON file")
    parser.add_argument("--parts", nargs="*", default=list(PARTS), choices=PARTS)
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds after which no new part starts")
    args = parser.parse_args(argv)
    from tools import benchmarks

    meta = {**benchmarks.meta(), "command": "python -m tools.benchmarks.ex09_rmsnorm " + " ".join(argv or sys.argv[1:])}
    prefix = meta["gpu"].lower().replace("nvidia", "").strip().replace(" ", "-")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = Results(out / f"{prefix}-ex09-rmsnorm.json", meta)
    run_parts(results, args.parts, budget_s=args.budget)
    print(f"\n{results.path}")
    print(table(results.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
