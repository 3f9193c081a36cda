"""Exercise 3's softmax against torch.softmax and three ways of calling torch.compile, fp32 and bf16.

    python -m tools.benchmarks.ex03_softmax --out docs/measurements   # the run (about 3-4 minutes on an H200)
    python -m tools.benchmarks ex03_softmax --out docs/measurements    # the same, through the common driver
    python -m tools.benchmarks.ex03_softmax --summary docs/measurements/h200-ex03-softmax.json
    python -m tools.benchmarks.ex03_softmax --registers                # no GPU: sm_90 registers and spills

Every kernel at one shape is timed in turns with the others (a, b, c, a, b, c: the card's power
state drifts), two medians each (`grader.bandwidth.time_ms`: L2 flushed before every run), and its
bandwidth is the minimum bytes, ``2 · M · N · element_size``, over the median, as a fraction of the
measured ceiling. Rows (``rows`` of the JSON; ``dtype`` is ``fp32`` or ``bf16``):

* M = 4096, N = 1024 ... 32768 and 256 in fp32, N = 1024 ... 65536 in bf16 (65536 is the 16-bit
  limit of one block):

  - ``solution``: solutions/ex03_softmax.py, with the registers and spills of its compiled kernel;
  - ``torch``: ``torch.softmax``; ``naive``: five PyTorch kernels (fp32); ``persistent``: exercise
    4's solution (fp32); ``online``: exercise 5's solution (fp32): the three Triton schedules of
    chapters 4-6 in the same turns, so one run compares them;
  - ``compile``: ``torch.compile(dynamic=False)``, compiled for each shape;
  - ``variant_compile_dynamic``: ``torch.compile(dynamic=True)``, one function for every shape;
  - ``variant_compile_shared_default``: ``torch.compile`` with its defaults, one function called on
    every shape in turn (1024, 2048, ...): it compiles the first shape as it is, and recompiles with
    a symbolic row length when the second shape arrives ("automatic dynamic shapes");
  - ``variant_compile_dynamic_from32768`` (fp32, N >= 4096): ``dynamic=True`` first called at
    N = 32768 instead of 1024 (does the first shape decide the kernel the others get?);
  - ``variant_warps{W}``: the solution's kernel with half and twice ``num_warps_for``'s choice;
  - ``variant_rows{R}_warps{W}`` (N = 1024, 2048): R short rows per program, one [R, BLOCK] block;
  - ``variant_graph_{solution,torch,compile}`` (M = 4096): the same call replayed from a CUDA graph, in
    turns: at N = 1024 a kernel of a few µs is shorter than its Python launch, and the first timing
    measures the launcher (the ``calls`` section has each one's host µs per call);
  - ``variant_streaming`` (fp32, N = 4096 and 32768): the solution's kernel with streaming cache
    hints (loads ``evict_first``, stores ``.cs``);

* N = 4096, M = 32, 256, 1024, 16384 (fp32): naive, torch, solution, persistent, online, compile.

Other sections of the JSON:

* ``first_compiles``: the first three compiles of the process (N = 1024, fp32, in the order
  dynamic=False, dynamic=True, default), each timed right after its first call, with how busy the
  host's CPUs were meanwhile and how many processes this one had started (Inductor's compile
  workers); ``warm_ms`` is the same function timed in turns later in the run;
* ``inductor``: every call that compiled: the mode, the shape, the seconds it took, the warnings,
  and each generated kernel's reduction (persistent or looped, its reduction block, loops over the
  row, online softmax, the configuration the autotuner kept; `inductor_capture.reduction_blocks`);
* ``calls``: per shape and peer at M = 4096, the GPU kernels one call launches (names, grids, blocks,
  registers, microseconds, from ``torch.profiler``) and the host's microseconds per call;
* the attachment ``inductor-kernels.txt`` (a separate file): the code each compile mode ran at
  N = 1024 and N = 8192 (fp32): the Triton kernels and the wrapper's ``call``.

Inductor's caches of graphs and autotuning results are off for the run: every compile is a fresh
one, as in a new process (``meta.inductor_caches``).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import torch
import triton
import triton.language as tl

from grader import bandwidth
from grader.exercises.ex03_softmax.spec import minimum_bytes
from tools import benchmarks
from tools.benchmarks import inductor_capture as capture
from tools.benchmarks.softmax_sweep import eager_softmax, naive_softmax, online_kernel, persistent_kernel

M = 4096
#: Row lengths at M = 4096, in the order they are first called (the default compile recompiles with
#: dynamic shapes at the second one). 256 comes last: it is in the chapter's table, not the study.
N_SWEEP = {"fp32": (1024, 2048, 4096, 8192, 16384, 32768, 256),
           "bf16": (1024, 2048, 4096, 8192, 16384, 32768, 65536)}
#: Row counts at N = M_SWEEP_N (fp32).
M_SWEEP = (32, 256, 1024, 16384)
M_SWEEP_N = 4096
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
#: (rows per program, warps) tried for short rows.
ROW_BLOCKS = {1024: ((2, 1), (2, 2), (4, 2), (4, 4), (8, 4), (8, 8)), 2048: ((2, 2), (2, 4), (4, 4), (4, 8))}
STREAMING_AT = (4096, 32768)
#: Where the generated code is saved in the attachment (fp32).
CAPTURE_AT = (1024, 8192)
#: The first shape of the second dynamic=True function.
DYNAMIC_FROM = 32768
ROUNDS = 2
REP_MS = 40
#: Where the inputs live (the course's tests run the sweep in Triton's interpreter on the CPU).
DEVICE = "cuda"

COMPILE_MODES = ("compile", "variant_compile_dynamic", "variant_compile_shared_default")
MODE_WORDS = {"compile": "torch.compile(dynamic=False), compiled for this shape",
              "variant_compile_dynamic": "torch.compile(dynamic=True), one function for every shape",
              "variant_compile_shared_default": "torch.compile() with defaults, one function called on every shape",
              "variant_compile_dynamic_from32768": "torch.compile(dynamic=True), first called at N = 32768"}
#: Peers also timed as CUDA-graph replays at M = 4096 (``variant_graph_{peer}`` rows).
GRAPHED = ("solution", "torch", "compile")
#: Peers whose launches and host time are recorded (``calls``).
PEERS = ("solution", "torch") + COMPILE_MODES


# --- the variants of the solution's kernel ----------------------------------------------------------

@triton.jit
def rows_kernel(
    x_ptr,  # pointer to x[0, 0]
    out_ptr,  # pointer to out[0, 0]
    x_row_stride,  # x.stride(0)
    out_row_stride,  # out.stride(0)
    n_rows,  # M
    n_cols,  # N
    BLOCK: tl.constexpr,  # a power of two >= n_cols
    ROWS: tl.constexpr,  # rows per program: the block is [ROWS, BLOCK]
    STREAMING: tl.constexpr,  # loads evict_first, stores .cs (streaming: nothing is read twice)
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offsets = rows.to(tl.int64)[:, None]
    if STREAMING:
        x = tl.load(x_ptr + offsets * x_row_stride + cols[None, :], mask=mask, other=-float("inf"),
                    eviction_policy="evict_first")
    else:
        x = tl.load(x_ptr + offsets * x_row_stride + cols[None, :], mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    z = x - tl.max(x, axis=1)[:, None]
    numerator = tl.exp(z)
    y = (numerator / tl.sum(numerator, axis=1)[:, None]).to(out_ptr.dtype.element_ty)
    if STREAMING:
        tl.store(out_ptr + offsets * out_row_stride + cols[None, :], y, mask=mask, cache_modifier=".cs")
    else:
        tl.store(out_ptr + offsets * out_row_stride + cols[None, :], y, mask=mask)


def with_warps(num_warps: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """The solution's launcher with another ``num_warps``."""
    from solutions.ex03_softmax import softmax_kernel

    def run(x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols,
                                  BLOCK=triton.next_power_of_2(n_cols), num_warps=num_warps)
        return out

    return run


def with_rows(rows: int, num_warps: int, *, streaming: bool = False) -> Callable[[torch.Tensor], torch.Tensor]:
    """``rows`` rows per program in one [rows, BLOCK] block (`rows_kernel`)."""

    def run(x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        rows_kernel[(triton.cdiv(n_rows, rows),)](x, out, x.stride(0), out.stride(0), n_rows, n_cols,
                                                  BLOCK=triton.next_power_of_2(n_cols), ROWS=rows,
                                                  STREAMING=streaming, num_warps=num_warps)
        return out

    return run


def solution_resources(x: torch.Tensor, num_warps: int) -> dict:
    """Registers and spills of the solution's kernel compiled for ``x`` with ``num_warps`` (a cache lookup
    once the kernel has run)."""
    from solutions.ex03_softmax import softmax_kernel

    try:
        out = torch.empty_like(x)
        compiled = softmax_kernel.warmup(x, out, x.stride(0), out.stride(0), x.shape[1],
                                         BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=num_warps, grid=(1,))
        if compiled is None:  # the interpreter compiles nothing
            return {}
        compiled._init_handles()
        return {"registers": int(compiled.n_regs), "spills": int(getattr(compiled, "n_spills", 0) or 0)}
    except Exception:
        return {}


def warps_tried(chosen: int) -> list[int]:
    """Half and twice the solution's choice, within 1 ... 32."""
    return [w for w in (chosen // 2, chosen * 2) if 1 <= w <= 32 and w != chosen]


# --- torch.compile, three ways ------------------------------------------------------------------------

class CompileModes:
    """The compiled functions of the run, each with a code object of its own (`capture.fresh_function`)."""

    def __init__(self) -> None:
        self.shared = {
            "variant_compile_dynamic": torch.compile(capture.fresh_function(eager_softmax, "softmax_dynamic"),
                                                     dynamic=True),
            "variant_compile_shared_default": torch.compile(
                capture.fresh_function(eager_softmax, "softmax_shared_default")),
            "variant_compile_dynamic_from32768": torch.compile(
                capture.fresh_function(eager_softmax, "softmax_dynamic_from32768"), dynamic=True),
        }
        self._static: dict[tuple, Callable] = {}
        #: (mode, dtype) -> the code of that mode's latest compile (static modes: per shape).
        self.latest: dict[tuple, capture.GeneratedCode] = {}

    def get(self, mode: str, m: int, n: int, dtype: str) -> Callable:
        if mode != "compile":
            return self.shared[mode]
        key = (m, n, dtype)
        if key not in self._static:
            fn = capture.fresh_function(eager_softmax, f"softmax_static_{m}x{n}_{dtype}")
            self._static[key] = torch.compile(fn, dynamic=False)
        return self._static[key]

    def code_key(self, mode: str, m: int, n: int, dtype: str) -> tuple:
        return (mode, m, n, dtype) if mode == "compile" else (mode, dtype)


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage()[:300])
        except Exception:
            pass


def first_call(modes: CompileModes, mode: str, x: torch.Tensor, dtype: str) -> tuple[Any, dict]:
    """Call a compiled mode on ``x`` (compiling when its guards ask for it) and describe what Inductor did."""
    m, n = x.shape
    fn = modes.get(mode, m, n, dtype)
    code = capture.GeneratedCode.start()
    handler = _Messages()
    loggers = [logging.getLogger(name) for name in ("torch._inductor", "torch._dynamo")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            out = fn(x)
            torch.cuda.synchronize()
            seconds = time.perf_counter() - start
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    code.stop()
    entry = {"kernel": mode, "mode": MODE_WORDS[mode], "M": m, "N": n, "dtype": dtype,
             "first_call_s": round(seconds, 2), "compiled": bool(code.wrappers()),
             "warnings": sorted({" ".join(str(w.message).split())[:300] for w in caught} | set(handler.messages))}
    if code.wrappers():
        modes.latest[modes.code_key(mode, m, n, dtype)] = code
        configs = capture.autotuned_configs(code.modules)
        entry["kernels"] = [{"name": name, **capture.reduction_blocks(source),
                             **({"autotuned": configs[name]} if name in configs else {})}
                            for name, source in code.kernels().items()]
        order = [name for w in code.wrappers()
                 for name in capture.launch_order(capture.call_function(capture.GeneratedCode.source(w)))]
        entry["launch_order"] = order
        entry.update(main_kernel(entry["kernels"], order))
    return out, entry


def main_kernel(kernels: list[dict], order: list[str]) -> dict:
    """Flat fields of the kernel that writes the output (the last launched), for the site's selectors:
    ``inductor[kernel=compile,N=8192,dtype=fp32].r_block`` and the like."""
    by_name = {k["name"]: k for k in kernels}
    last = next((by_name[name] for name in reversed(order) if name in by_name), kernels[-1] if kernels else None)
    if last is None:
        return {"kernels_generated": 0}
    config = last.get("autotuned") or {}
    kwargs = config.get("kwargs", {})
    return {"kernels_generated": len(kernels), "reduction": last["kind"],
            "r_block": last["r_block"] or kwargs.get("R0_BLOCK", kwargs.get("RBLOCK")),
            "r_block_autotuned": last["r_block_autotuned"], "x_block": kwargs.get("XBLOCK"),
            "num_warps": config.get("num_warps"), "loops_over_row": last["loops_over_row"],
            "online_softmax": last["online_softmax"], "sizes": "constant" if last["static_rnumel"] else "symbolic"}


# --- checking and timing ---------------------------------------------------------------------------

def _close(out: Any, want: torch.Tensor, dtype: str) -> str | None:
    """None when ``out`` is softmax(x) within the dtype's rounding, else what is wrong."""
    if not isinstance(out, torch.Tensor) or out.shape != want.shape:
        return f"returned {type(out).__name__} {tuple(getattr(out, 'shape', ()))}, expected {tuple(want.shape)}"
    rtol, atol = (1e-4, 1e-6) if dtype == "fp32" else (1.6e-2, 1e-5)
    if bool(torch.allclose(out.float(), want, rtol=rtol, atol=atol)):
        return None
    return f"wrong answer (max abs error {(out.float() - want).abs().max().item():.3g})"


def time_in_turns(kernels: dict[str, Callable[[], Any]], *, rounds: int, rep_ms: int) -> dict[str, list | str]:
    """`bandwidth.time_in_turns`, one kernel's failure recorded as its error instead of ending the shape."""
    runs: dict[str, list | str] = {name: [] for name in kernels}
    for _ in range(rounds):
        for name, fn in kernels.items():
            if isinstance(runs[name], str):
                continue
            try:
                runs[name].append(bandwidth.time_ms(fn, rep_ms=rep_ms))
            except Exception as exc:  # one kernel failing must not lose the others' numbers
                runs[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return runs


def timed_row(name: str, times: list | str, nbytes: int, ceiling: float, **keys) -> dict:
    if isinstance(times, str):
        return {"kernel": name, **keys, "ms": None, "error": times}
    ms = statistics.median(times)
    gbps = bandwidth.gbps(nbytes, ms)
    return {"kernel": name, **keys, "ms": round(ms, 5), "ms_runs": [round(t, 5) for t in times], "bytes": nbytes,
            "gbps": round(gbps, 1), "fraction": round(gbps / ceiling, 4)}


class Sweep:
    """The run: `run` calls `first_compiles`, then `shape` for every shape, writing as it goes."""

    def __init__(self, *, with_compile: bool = True, diagnostics: bool = True, rounds: int = ROUNDS,
                 rep_ms: int = REP_MS, record_path: Path | None = None, meta: dict | None = None,
                 graphs: bool | None = None) -> None:
        from solutions.ex03_softmax import softmax

        self.solution = softmax
        self.online = online_kernel()
        self.persistent = persistent_kernel()
        self.with_compile = with_compile
        self.diagnostics = diagnostics
        #: CUDA-graph replays of the peers at M (``variant_graph_*`` rows); a CUDA device is needed.
        self.graphs = DEVICE == "cuda" if graphs is None else graphs
        self.rounds = rounds
        self.rep_ms = rep_ms
        self.record_path = record_path
        self.meta = meta
        self.modes = CompileModes() if with_compile else None
        self.ceiling = benchmarks.ceiling_gbps()
        self.record: dict = {"rows": [], "first_compiles": [], "inductor": [], "calls": [], "attachments": {}}
        self.captured: list[str] = []

    def save(self) -> None:
        if self.record_path is None:
            return
        data = {"meta": self.meta, **{k: v for k, v in self.record.items() if k != "attachments"}}
        tmp = self.record_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.record_path)

    # The first compiles of the process, each timed at once.
    def first_compiles(self) -> None:
        x = torch.randn(M, 1024, device=DEVICE)
        for mode in COMPILE_MODES:
            try:
                clock = capture.CpuClock()
                _, entry = first_call(self.modes, mode, x, "fp32")
                self.record["inductor"].append(entry)
                compiled = clock.snapshot()
                clock = capture.CpuClock()
                fn = self.modes.get(mode, M, 1024, "fp32")
                ms = bandwidth.time_ms(lambda: fn(x), rep_ms=self.rep_ms)
                host_us = capture.host_us_per_call(lambda: fn(x))
                gbps = bandwidth.gbps(minimum_bytes(M, 1024, 4), ms)
                self.record["first_compiles"].append({
                    "kernel": mode, "M": M, "N": 1024, "dtype": "fp32", "first_call_s": entry["first_call_s"],
                    "ms": round(ms, 5), "fraction": round(gbps / self.ceiling, 4), "host_us": host_us,
                    "while_compiling": compiled, "while_timing": clock.snapshot()})
            except Exception as exc:
                self.record["first_compiles"].append({"kernel": mode, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        del x
        try:  # the second dynamic=True function sees N = 32768 first
            x = torch.randn(M, DYNAMIC_FROM, device=DEVICE)
            _, entry = first_call(self.modes, "variant_compile_dynamic_from32768", x, "fp32")
            self.record["inductor"].append(entry)
            del x
        except Exception as exc:
            self.record["inductor"].append({"kernel": "variant_compile_dynamic_from32768",
                                            "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        self.save()

    def kernels_at(self, m: int, n: int, dtype: str) -> dict[str, tuple[Callable, dict]]:
        """name -> (callable on x, extra row keys) for one shape."""
        from solutions.ex03_softmax import num_warps_for

        kernels: dict[str, tuple[Callable, dict]] = {}
        if dtype == "fp32":
            kernels["naive"] = (naive_softmax, {})
        kernels["torch"] = (eager_softmax, {})
        chosen = num_warps_for(triton.next_power_of_2(n))
        kernels["solution"] = (self.solution, {"num_warps": chosen})
        if dtype == "fp32" and self.persistent is not None:
            kernels["persistent"] = (self.persistent, {})
        if dtype == "fp32" and self.online is not None:
            kernels["online"] = (self.online, {})
        if self.with_compile:
            kernels["compile"] = (self.modes.get("compile", m, n, dtype), {})
            if m == M:
                kernels["variant_compile_dynamic"] = (self.modes.get("variant_compile_dynamic", m, n, dtype), {})
                kernels["variant_compile_shared_default"] = (
                    self.modes.get("variant_compile_shared_default", m, n, dtype), {})
                if dtype == "fp32" and n >= 4096:
                    kernels["variant_compile_dynamic_from32768"] = (
                        self.modes.get("variant_compile_dynamic_from32768", m, n, dtype), {})
        if m == M:
            for w in warps_tried(chosen):
                kernels[f"variant_warps{w}"] = (with_warps(w), {"num_warps": w})
            for rows, w in ROW_BLOCKS.get(n, ()):
                kernels[f"variant_rows{rows}_warps{w}"] = (with_rows(rows, w), {"rows_per_program": rows, "num_warps": w})
            if dtype == "fp32" and n in STREAMING_AT:
                kernels["variant_streaming"] = (with_rows(1, chosen, streaming=True), {"num_warps": chosen})
        return kernels

    def shape(self, m: int, n: int, dtype: str) -> None:
        torch_dtype = DTYPES[dtype]
        x = torch.randn(m, n, device=DEVICE, dtype=torch_dtype)
        want = torch.softmax(x.float(), dim=-1)
        keys = {"M": m, "N": n, "dtype": dtype}
        nbytes = minimum_bytes(m, n, x.element_size())
        ready: dict[str, Callable[[], Any]] = {}
        extra: dict[str, dict] = {}
        for name, (fn, more) in self.kernels_at(m, n, dtype).items():
            try:
                if name in COMPILE_MODES or name.startswith("variant_compile"):
                    out, entry = first_call(self.modes, name, x, dtype)
                    if entry["compiled"]:
                        self.record["inductor"].append(entry)
                else:
                    out = fn(x)
                    torch.cuda.synchronize()
                wrong = _close(out, want, dtype)
                del out
                if wrong:
                    raise AssertionError(wrong)
                ready[name] = (lambda fn=fn: fn(x))
                extra[name] = more
            except Exception as exc:  # a kernel that cannot run here is a finding, recorded as its row
                self.record["rows"].append(benchmarks.failed_row(name, exc, **keys, **more))
        del want
        if any(e.get("N") == n and e.get("M") == m and e.get("dtype") == dtype for e in self.record["inductor"]):
            capture.wait_until_quiet(max_s=10.0)  # compile workers still busy would slow the host
        times = time_in_turns(ready, rounds=self.rounds, rep_ms=self.rep_ms)
        for name, runs in times.items():
            row = timed_row(name, runs, nbytes, self.ceiling, **keys, **extra[name])
            if name == "solution" or name.startswith("variant_warps"):
                row.update(solution_resources(x, extra[name]["num_warps"]))
            self.record["rows"].append(row)
        if m == M and self.graphs:
            self.graph_rows(ready, nbytes, keys)
        for first in self.record["first_compiles"]:
            if (first.get("N"), first.get("dtype"), m) == (n, dtype, M) and first["kernel"] in times:
                runs = times[first["kernel"]]
                if not isinstance(runs, str):
                    warm = statistics.median(runs)
                    first["warm_ms"] = round(warm, 5)
                    first["warm_fraction"] = round(bandwidth.gbps(nbytes, warm) / self.ceiling, 4)
        if self.diagnostics and m == M:
            for name in PEERS:
                if name not in ready:
                    continue
                try:
                    launches = capture.launches_per_call(ready[name])
                    last = launches["launches"][-1] if launches["launches"] else {}
                    call = {"kernel": name, **keys, **launches,
                            "programs": _product(last.get("grid")), "threads_per_program": _product(last.get("block")),
                            "kernel_names": " + ".join(k["name"] for k in launches["launches"]),
                            "host_us_per_call": capture.host_us_per_call(ready[name])}
                except Exception as exc:
                    call = {"kernel": name, **keys, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
                self.record["calls"].append(call)
        if self.with_compile and dtype == "fp32" and m == M and n in CAPTURE_AT:
            self.capture_code(n)
        del x, ready
        torch.cuda.empty_cache()
        self.save()

    def graph_rows(self, ready: dict[str, Callable[[], Any]], nbytes: int, keys: dict) -> None:
        """``variant_graph_{peer}``: the solution, torch.softmax and torch.compile replayed from a CUDA graph,
        in turns: the kernels without the Python launcher in between (`grader.bandwidth.graphed`)."""
        replays = {}
        for name in GRAPHED:
            if name not in ready:
                continue
            try:
                replays[f"variant_graph_{name}"] = bandwidth.graphed(ready[name])
            except Exception as exc:  # a call that cannot be captured is a finding, recorded as its row
                self.record["rows"].append(benchmarks.failed_row(f"variant_graph_{name}", exc, **keys))
        for name, runs in time_in_turns(replays, rounds=self.rounds, rep_ms=self.rep_ms).items():
            self.record["rows"].append(timed_row(name, runs, nbytes, self.ceiling, **keys))

    def capture_code(self, n: int) -> None:
        """The generated code each compile mode ran at this shape, for the attachment."""
        for mode in COMPILE_MODES + (("variant_compile_dynamic_from32768",) if n >= 4096 else ()):
            code = self.modes.latest.get(self.modes.code_key(mode, M, n, "fp32"))
            if code is None:
                continue
            kernels = code.kernels()
            configs = capture.autotuned_configs(code.modules)
            parts = [f"# {'=' * 98}\n# N = {n}, fp32, {mode}: {MODE_WORDS[mode]}\n# {'=' * 98}\n"]
            for name, source in kernels.items():
                blocks = capture.reduction_blocks(source)
                parts.append(f"# kernel {name}: {describe_kernel(blocks, configs.get(name))}\n{source}\n")
            for wrapper in code.wrappers():
                parts.append("# the wrapper's call (the launches of one call):\n"
                             + capture.call_function(capture.GeneratedCode.source(wrapper)) + "\n")
            self.captured.append("".join(parts))

    def run(self) -> dict:
        started = time.time()
        if self.with_compile:
            _fresh_inductor_caches()
            self.first_compiles()
        for dtype, sweep in N_SWEEP.items():
            for n in sweep:
                self._guarded(M, n, dtype)
        for m in M_SWEEP:
            self._guarded(m, M_SWEEP_N, "fp32")
        if self.captured:
            header = (f"# torch.compile(torch.softmax) at M = {M}: the generated code each way of compiling ran\n"
                      f"# (python -m tools.benchmarks.ex03_softmax; torch {torch.__version__}, "
                      f"triton {triton.__version__})\n\n")
            self.record["attachments"]["inductor-kernels.txt"] = header + "\n".join(self.captured)
        self.record["notes"] = {"seconds": round(time.time() - started, 1), "rounds": self.rounds,
                                "rep_ms": self.rep_ms, "inductor_caches": "off" if self.with_compile else None,
                                "inductor_settings": _inductor_settings() if self.with_compile else None}
        self.save()
        return self.record

    def _guarded(self, m: int, n: int, dtype: str) -> None:
        try:
            self.shape(m, n, dtype)
        except Exception as exc:  # a shape that fails as a whole (out of memory...) is recorded, the run goes on
            self.record["rows"].append(benchmarks.failed_row("shape", exc, M=m, N=n, dtype=dtype))
            torch.cuda.empty_cache()


def _product(values) -> int | None:
    if not isinstance(values, (list, tuple)) or not values:
        return None
    total = 1
    for v in values:
        total *= int(v)
    return total


def describe_kernel(blocks: dict, config: dict | None) -> str:
    """One line: persistent or looped, the reduction block, loops over the row, the kept config."""
    words = [f"{blocks['kind']} reduction" if blocks["kind"] in ("persistent", "looped") else blocks["kind"]]
    if blocks["r_block"]:
        words.append(f"R0_BLOCK {blocks['r_block']} (fixed)")
    elif blocks["r_block_autotuned"]:
        chosen = (config or {}).get("kwargs", {})
        block = chosen.get("R0_BLOCK", chosen.get("RBLOCK"))
        words.append(f"R0_BLOCK {block if block else '?'} (autotuned)")
    if blocks["loops_over_row"]:
        words.append(f"{blocks['loops_over_row']} loop(s) over the row")
    if blocks["online_softmax"]:
        words.append("online softmax")
    words.append("sizes constant" if blocks["static_rnumel"] else "sizes symbolic")
    if config:
        x_block = config.get("kwargs", {}).get("XBLOCK")
        words.append(f"XBLOCK {x_block}, {config.get('num_warps')} warps, among {config.get('candidates')} config(s)")
    return "; ".join(words)


def _fresh_inductor_caches() -> None:
    """Every compile of the run a fresh one: no graph or autotuning result reused from disk or from an
    earlier compile of the same graph in another mode."""
    import torch._inductor.config as config

    for name in ("fx_graph_cache", "fx_graph_remote_cache", "autotune_local_cache", "autotune_remote_cache",
                 "bundled_autotune_remote_cache"):
        if hasattr(config, name):
            try:
                setattr(config, name, False)
            except Exception:
                pass


def _inductor_settings() -> dict:
    """The Inductor settings that decide the kernels of this study, as this run had them."""
    import torch._inductor.config as config

    names = ("compile_threads", "worker_start_method", "online_softmax", "split_reductions",
             "unroll_reductions_threshold", "triton.persistent_reductions", "triton.multi_kernel",
             "triton.cooperative_reductions", "max_autotune", "coordinate_descent_tuning")
    settings = {}
    for name in names:
        value: Any = config
        for part in name.split("."):
            value = getattr(value, part, None)
        settings[name] = value if isinstance(value, (int, float, str, bool, type(None))) else str(value)
    return settings


def run() -> dict:
    """The rows (and the other sections) for `python -m tools.benchmarks ex03_softmax`."""
    return Sweep().run()


# --- reading a results file -----------------------------------------------------------------------

def summary(record: dict) -> str:
    """The short table printed last: the peers at M = 4096, the targets, the warps, Inductor's kernels."""
    rows = [r for r in record.get("rows", []) if r.get("M") == M]
    meta = record.get("meta", {})
    by = {(r["kernel"], r["N"], r.get("dtype", "fp32")): r for r in rows if "N" in r}

    def pct(kernel: str, n: int, dtype: str) -> str:
        r = by.get((kernel, n, dtype))
        if r is None:
            return "-"
        return "error" if r.get("fraction") is None else f"{100 * r['fraction']:.1f}"

    lines = [f"{meta.get('gpu', '?')}, torch {meta.get('torch', '?')}, triton {meta.get('triton', '?')}, "
             f"ceiling {meta.get('ceiling_gbps', '?')} GB/s; % of the ceiling at M = {M}, median of "
             f"{record.get('notes', {}).get('rounds', '?')} medians in turns"]
    columns = (("solution", "solution"), ("torch", "torch"), ("compile", "static"),
               ("variant_compile_dynamic", "dynamic"), ("variant_compile_shared_default", "default"),
               ("variant_compile_dynamic_from32768", "dyn@32k"))
    lines.append(f"{'dtype':<5} {'N':>6} " + " ".join(f"{label:>8}" for _, label in columns) + "  best variant")
    for dtype in ("fp32", "bf16"):
        for n in sorted({k[1] for k in by if k[2] == dtype}):
            variants = [r for (k, nn, d), r in by.items()
                        if nn == n and d == dtype and (k.startswith("variant_warps") or k.startswith("variant_rows")
                                                       or k == "variant_streaming") and r.get("fraction")]
            best = max(variants, key=lambda r: r["fraction"], default=None)
            best_text = f"{best['kernel']} {100 * best['fraction']:.1f}" if best else ""
            lines.append(f"{dtype:<5} {n:>6} " + " ".join(f"{pct(k, n, dtype):>8}" for k, _ in columns)
                         + f"  {best_text}")
    lines.extend(check_targets(by))
    for entry in record.get("inductor", []):  # every fp32 compile at M = 4096 (dynamic=False: two shapes)
        if (entry.get("dtype") == "fp32" and entry.get("M") == M and entry.get("kernels")
                and (entry["kernel"] != "compile" or entry.get("N") in CAPTURE_AT)):
            for k in entry["kernels"]:
                lines.append(f"inductor {entry['kernel']} compiled at N={entry['N']}: {k['name']}: "
                             f"{describe_kernel(k, k.get('autotuned'))}")
            for warning in entry.get("warnings", [])[:2]:
                lines.append(f"  warned: {warning[:150]}")
    for call in record.get("calls", []):
        if call.get("dtype") == "fp32" and call.get("N") in CAPTURE_AT and call["kernel"] in COMPILE_MODES:
            if "error" in call:
                lines.append(f"call {call['kernel']} N={call['N']}: not profiled ({call['error'][:100]})")
                continue
            lines.append(f"call {call['kernel']} N={call['N']}: {call.get('kernels_per_call')} kernel(s): "
                         f"{call.get('kernel_names')}, {call.get('programs')} programs x "
                         f"{call.get('threads_per_program')} threads, GPU {call.get('gpu_us_per_call')} us, "
                         f"host {call.get('host_us_per_call')} us")
    for first in record.get("first_compiles", []):
        if "ms" in first:
            warm = first.get("warm_ms")
            busy = (first.get("while_timing") or {}).get("cpu_busy")
            lines.append(f"first compile {first['kernel']} N=1024: just compiled {first['ms'] * 1e3:.1f} us "
                         f"(host {first.get('host_us')} us/call, CPUs {busy} busy), later in turns "
                         f"{'-' if warm is None else f'{warm * 1e3:.1f} us'}")
    return "\n".join(lines)


def check_targets(by: dict) -> list[str]:
    """The exercise's performance targets, each marked ok or MISSED (see the module docstring)."""
    lines = []

    def fraction(kernel, n, dtype):
        r = by.get((kernel, n, dtype))
        return None if r is None else r.get("fraction")

    top = fraction("solution", 32768, "fp32")
    lines.append(f"[{'ok' if top and top >= 0.90 else 'MISSED'}] fp32 N=32768: solution "
                 f"{'-' if top is None else f'{100 * top:.1f}%'} of the ceiling (target >= 90%)")
    for dtype in ("fp32", "bf16"):
        missed_torch, missed_compile, seen = [], [], []
        for n in (1024, 2048, 4096, 8192, 16384, 32768):
            sol = fraction("solution", n, dtype)
            if sol is None:
                continue
            seen.append(n)
            eager = fraction("torch", n, dtype)
            if eager is not None and sol <= eager:
                missed_torch.append(n)
            for mode in COMPILE_MODES:
                comp = fraction(mode, n, dtype)
                if comp is None:
                    continue
                if (n >= 4096 and sol <= comp) or (n < 4096 and sol * 1.03 < comp):
                    missed_compile.append(f"{n} ({mode})")
        if not seen:
            lines.append(f"[no data] {dtype}: no solution row at N = 1024 ... 32768")
            continue
        lines.append(f"[{'MISSED' if missed_torch else 'ok'}] {dtype}: solution ahead of torch.softmax at every N"
                     + (f"; not at {missed_torch}" if missed_torch else ""))
        for n in missed_torch:  # the same pair replayed from CUDA graphs: the kernels without their launchers
            sol, eager = fraction("variant_graph_solution", n, dtype), fraction("variant_graph_torch", n, dtype)
            if sol is not None and eager is not None:
                lines.append(f"      {dtype} N={n} from CUDA graphs: solution {100 * sol:.1f}%, torch.softmax "
                             f"{100 * eager:.1f}%")
        lines.append(f"[{'MISSED' if missed_compile else 'ok'}] {dtype}: ahead of every torch.compile mode from "
                     f"N=4096, within 3% below" + (f"; not at {', '.join(missed_compile)}" if missed_compile else ""))
    return lines


# --- without a GPU: registers and spills --------------------------------------------------------------

def registers_table() -> list[dict]:
    """The solution's kernel compiled for sm_90 at each row length, dtype and warps the sweep times."""
    from tools.benchmarks.sm90_resources import compile_report
    from solutions.ex03_softmax import num_warps_for, softmax_kernel

    table = []
    for dtype in ("fp32", "bf16"):
        for n in sorted(set(N_SWEEP[dtype])):
            chosen = num_warps_for(n)
            for w in sorted([chosen, *warps_tried(chosen)]):
                report = compile_report(softmax_kernel, pointers={"x_ptr": dtype, "out_ptr": dtype},
                                        integers={"x_row_stride": n, "out_row_stride": n, "n_cols": n},
                                        constexprs={"BLOCK": n}, num_warps=w)
                table.append({"dtype": dtype, "N": n, "num_warps": w, "chosen": w == chosen, **report})
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmarks.ex03_softmax")
    parser.add_argument("--out", help="folder for the results (the run; needs a GPU)")
    parser.add_argument("--prefix", default=None, help="file name prefix (default: the GPU's name, e.g. h200)")
    parser.add_argument("--summary", metavar="FILE", help="print the summary of a results file and exit")
    parser.add_argument("--registers", action="store_true", help="sm_90 registers and spills (no GPU needed)")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(json.loads(Path(args.summary).read_text())))
        return 0
    if args.registers:
        print(f"solutions/ex03_softmax.py compiled for sm_90, Triton {triton.__version__}")
        for r in registers_table():
            print(f"  {r['dtype']} N={r['N']:<6} {r['num_warps']:>2} warps{' (chosen)' if r['chosen'] else '         '}"
                  f"  {r['registers']} registers, {r['stack_bytes']} bytes of stack, "
                  f"{'?' if r['spill_bytes'] is None else r['spill_bytes']} bytes of spill stores")
        return 0
    if not args.out:
        parser.error("give --out DIR (a GPU run), --summary FILE or --registers")
    from tools.benchmarks.__main__ import write_record

    header = benchmarks.meta()
    prefix = args.prefix or benchmarks.file_prefix(header)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{prefix}-ex03-softmax.json"
    started = time.time()
    record = Sweep(record_path=path, meta=header).run()
    write_record(path, "ex03_softmax", header, record, started, command="python -m tools.benchmarks.ex03_softmax")
    print(summary(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
