"""Cross-entropy over Llama 3's vocabulary (exercise 10): the solution against eager PyTorch,
torch.compile and Liger-Kernel, time and peak memory side by side, every group timed in turns.

Two files (``<gpu>-`` is the GPU's short name, ``h200-`` on an H200):

* ``<gpu>-ex10-cross-entropy.json``, the exercise's file. Rows of part ``by_T``: V = 128256, bf16,
  T = 1024 ... 16384, one group per T timed in turns (3 rounds): ``solution`` (and
  ``solution_again``, the same function, to show the noise), ``eager`` (F.cross_entropy on the bf16
  logits, then backward), ``eager_fp32`` (on ``logits.float()``, as training code upcasts them),
  ``compile`` (torch.compile of eager_fp32, compiled once and reused across T, as a user gets it
  by default: the second T recompiles it for dynamic shapes), ``liger`` (Liger-Kernel's
  ``LigerCrossEntropyFunction``, which also writes the gradient into the logits). Part ``fp32``:
  T = 4096 fp32 logits, solution, eager and liger. Every row carries ``peak_extra_bytes``: the
  CUDA allocator's peak during one call (forward and backward) above what was allocated before it;
  the logits themselves are allocated before.
* ``<gpu>-ex10-sweep.json``, the launch sweep at T = 8192 bf16 (the grader's performance input):
  the solution's kernel with other blocks and warp counts (``variant_b<BLOCK>_w<warps>``), a version
  with L2 eviction hints (``evict``: pass 1 keeps the row, pass 2 streams it) and chapter 6's per-lane
  form (``per_lane``), both at the solution's block and warps, timed in turns with the solution as
  shipped; then (part ``static``, when the time budget allows) torch.compile with ``dynamic=False``
  in turns with the solution.

``gbps`` and ``fraction`` count the algorithm's bytes for every kernel,
``3·T·V·element_size + 8·T + 4`` (``grader.exercises.ex10_cross_entropy.spec.minimum_bytes``), so
fractions compare times directly; ``fraction_2pass`` counts one read and one write
(``least_hbm_bytes``): the memory moved at least if the L2 served the second read.

Each in-place kernel (the solution, its variants, Liger) overwrites its logits with the gradient on
every call, so every timed call after the first works on the previous call's gradient: the same
bytes and the same arithmetic. Each implementation has its own logits; the first call of each is
checked against a float64 loss computed beforehand (``loss_error``).

On a GPU machine, from the repository root (Liger-Kernel from its wheel, if one is in .whl/)::

    python -m tools.benchmarks.ex10_cross_entropy --out DIR

writes both files into DIR after every part (a failure or a timeout keeps what was measured) and
prints a table. ``python -m tools.benchmarks ex10_cross_entropy`` runs the same through the common
driver (one file, no sweep).
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

from grader.exercises.ex10_cross_entropy.spec import least_hbm_bytes, minimum_bytes

V = 128256
BY_T = (1024, 2048, 4096, 8192, 16384)
SWEEP_T = 8192
FP32_T = 4096
ROUNDS = 3
#: (BLOCK, num_warps) of the solution's kernel at bf16, besides the shipped choice.
LAUNCHES = ((4096, 4), (4096, 8), (8192, 8), (8192, 16), (16384, 8), (16384, 32), (32768, 16), (32768, 32))
#: Seconds after which no new part starts (the device run is budgeted at 4 minutes; a part takes up to a
#: minute, torch.compile's first call included).
BUDGET_S = float(os.environ.get("EX10_BUDGET_S", "170"))  # seconds after which no new part starts


# --- variants of the solution's kernel (the sweep) -----------------------------------------------

@triton.jit
def evict_kernel(
    logits_ptr,  # pointer to logits[0, 0], overwritten with the gradient
    logits_row_stride,  # elements between row starts
    target_ptr,  # int64 targets
    row_loss_ptr,  # T float32 row losses, divided by count
    count_ptr,  # int32 count of rows that are not ignored
    n_cols,  # V
    ignore_index,  # the ignored target value
    BLOCK: tl.constexpr,  # columns per iteration
):
    # The solution's kernel with L2 eviction hints: pass 1 asks the L2 to keep the row (evict_last),
    # pass 2 reads and writes it as a stream (evict_first), so the second read may hit the L2.
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * logits_row_stride
    cols = tl.arange(0, BLOCK)
    target = tl.load(target_ptr + row)
    inv_count = 1.0 / tl.maximum(tl.load(count_ptr), 1).to(tl.float32)
    if target == ignore_index:
        start = 0
        while start < n_cols:
            tl.store(x_row + start + cols, tl.zeros((BLOCK,), tl.float32).to(logits_ptr.dtype.element_ty),
                     mask=start + cols < n_cols)
            start += BLOCK
        tl.store(row_loss_ptr + row, 0.0)
    else:
        m = tl.full((), float("-inf"), tl.float32)
        d = tl.full((), 0.0, tl.float32)
        x_target = tl.full((), 0.0, tl.float32)
        start = 0
        while start < n_cols:
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"), eviction_policy="evict_last")
            x = x.to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
            d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)
            m = m_new
            x_target += tl.sum(tl.where(start + cols == target, x, 0.0), axis=0)
            start += BLOCK
        lse = m + tl.log(d)
        start = 0
        while start < n_cols:
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"), eviction_policy="evict_first")
            p = tl.exp(x.to(tl.float32) - lse)
            grad = tl.where(start + cols == target, p - 1.0, p) * inv_count
            tl.store(x_row + start + cols, grad.to(logits_ptr.dtype.element_ty), mask=mask,
                     eviction_policy="evict_first")
            start += BLOCK
        tl.store(row_loss_ptr + row, (lse - x_target) * inv_count)


@triton.jit
def per_lane_kernel(
    logits_ptr,  # pointer to logits[0, 0], overwritten with the gradient
    logits_row_stride,  # elements between row starts
    target_ptr,  # int64 targets
    row_loss_ptr,  # T float32 row losses, divided by count
    count_ptr,  # int32 count of rows that are not ignored
    n_cols,  # V
    ignore_index,  # the ignored target value
    BLOCK: tl.constexpr,  # columns per iteration
):
    # Chapter 6's per-lane form: a running max and sum per lane, merged after the loop, so pass 1 has
    # no reduction across the block (but two exponentials per element instead of one).
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * logits_row_stride
    cols = tl.arange(0, BLOCK)
    target = tl.load(target_ptr + row)
    inv_count = 1.0 / tl.maximum(tl.load(count_ptr), 1).to(tl.float32)
    if target == ignore_index:
        start = 0
        while start < n_cols:
            tl.store(x_row + start + cols, tl.zeros((BLOCK,), tl.float32).to(logits_ptr.dtype.element_ty),
                     mask=start + cols < n_cols)
            start += BLOCK
        tl.store(row_loss_ptr + row, 0.0)
    else:
        m = tl.full((BLOCK,), float("-inf"), tl.float32)
        d = tl.zeros((BLOCK,), tl.float32)
        picked = tl.zeros((BLOCK,), tl.float32)
        start = 0
        while start < n_cols:
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, x)
            m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
            d = d * tl.exp(m - m_ref) + tl.exp(x - m_ref)
            m = m_new
            picked += tl.where(start + cols == target, x, 0.0)
            start += BLOCK
        m_row = tl.max(m, axis=0)
        d_row = tl.sum(tl.where(m == float("-inf"), 0.0, d * tl.exp(m - m_row)), axis=0)
        lse = m_row + tl.log(d_row)
        start = 0
        while start < n_cols:
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
            p = tl.exp(x - lse)
            grad = tl.where(start + cols == target, p - 1.0, p) * inv_count
            tl.store(x_row + start + cols, grad.to(logits_ptr.dtype.element_ty), mask=mask)
            start += BLOCK
        tl.store(row_loss_ptr + row, (lse - tl.sum(picked, axis=0)) * inv_count)


def launcher(kernel, block: int, warps: int) -> Callable:
    """The solution's launcher with another main kernel, block or warp count."""
    from solutions.ex10_cross_entropy import count_kernel, sum_kernel

    def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
        n_rows, n_cols = logits.shape
        loss = torch.empty((), dtype=torch.float32, device=logits.device)
        row_loss = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
        count = torch.empty((), dtype=torch.int32, device=logits.device)
        rows_block = min(4096, triton.next_power_of_2(n_rows))
        count_kernel[(1,)](count, target, n_rows, ignore_index, BLOCK=rows_block)
        kernel[(n_rows,)](logits, logits.stride(0), target, row_loss, count, n_cols, ignore_index,
                          BLOCK=min(block, triton.next_power_of_2(n_cols)), num_warps=warps)
        sum_kernel[(1,)](loss, row_loss, n_rows, BLOCK=rows_block)
        return loss

    return cross_entropy


# --- the implementations --------------------------------------------------------------------------

def liger_function() -> tuple[Callable | None, str]:
    """Liger-Kernel's autograd function and its version, or None and the exact reason it cannot run."""
    try:
        import liger_kernel
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    except Exception as exc:  # not installed, or an import that fails on this machine
        return None, f"Liger-Kernel did not import: {type(exc).__name__}: {exc}"
    version = getattr(liger_kernel, "__version__", None)
    if version is None:
        try:
            from importlib.metadata import version as dist_version

            version = dist_version("liger-kernel")
        except Exception:
            version = "unknown"
    return LigerCrossEntropyFunction, f"liger-kernel {version}"


class Impl:
    """One implementation on its own logits: ``call()`` computes the loss and the gradient once;
    ``reset()`` drops what the previous call left (an autograd gradient) before a memory reading."""

    def __init__(self, name: str, logits: torch.Tensor, target: torch.Tensor, run: Callable, in_place: bool):
        self.name, self.target, self.run, self.in_place = name, target, run, in_place
        self.logits = logits.detach().requires_grad_(not in_place or name == "liger")

    def reset(self) -> None:
        self.logits.grad = None

    def call(self) -> torch.Tensor:
        self.logits.grad = None
        return self.run(self.logits, self.target)


def _autograd(loss_of: Callable) -> Callable:
    def run(logits, target):
        loss = loss_of(logits, target)
        loss.backward()
        return loss.detach()

    return run


def implementations(T: int, dtype: torch.dtype, device: str, *, with_compile: Callable | None,
                    liger, kernels: dict[str, Callable], generator: torch.Generator,
                    with_eager: bool = True) -> tuple[dict[str, Impl], torch.Tensor]:
    """Fresh logits for each implementation (the same values), and the targets."""
    base = torch.randn((T, V), generator=generator, device=device, dtype=torch.float32).to(dtype)
    target = torch.randint(0, V, (T,), generator=generator, device=device)
    impls: dict[str, Impl] = {}
    for name, fn in kernels.items():
        impls[name] = Impl(name, base.clone(), target, lambda x, t, fn=fn: fn(x, t), in_place=True)
    if dtype == torch.float32:
        impls["eager"] = Impl("eager", base.clone(), target, _autograd(F.cross_entropy), in_place=False)
    elif with_eager:
        impls["eager"] = Impl("eager", base.clone(), target, _autograd(F.cross_entropy), in_place=False)
        impls["eager_fp32"] = Impl("eager_fp32", base.clone(), target,
                                   _autograd(lambda x, t: F.cross_entropy(x.float(), t)), in_place=False)
    if with_compile is not None:
        impls["compile"] = Impl("compile", base.clone(), target, _autograd(with_compile), in_place=False)
    if liger is not None:
        impls["liger"] = Impl("liger", base.clone(), target,
                              _autograd(lambda x, t: liger.apply(x, t, None)[0]), in_place=True)
    return impls, base


def reference_loss(logits: torch.Tensor, target: torch.Tensor) -> float:
    """The mean cross-entropy in float64, 256 rows at a time."""
    total = 0.0
    for start in range(0, logits.shape[0], 256):
        x = logits[start:start + 256].double()
        t = target[start:start + 256]
        total += float((torch.logsumexp(x, dim=1) - x.gather(1, t[:, None])[:, 0]).sum())
    return total / logits.shape[0]


def cuda_peak(impl: Impl) -> int | None:
    """Bytes the allocator held at its peak during one call, above what was allocated before it."""
    if not torch.cuda.is_available() or impl.logits.device.type != "cuda":
        return None
    impl.reset()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    impl.call()
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated() - before)


# --- measuring a group in turns ---------------------------------------------------------------------

def _figures(row: dict, T: int, element_size: int, ceiling: float | None) -> dict:
    from grader import bandwidth

    ms = row.get("ms")
    if not ms:
        return row
    nbytes = minimum_bytes(T, V, element_size)
    row.update(bytes=nbytes, gbps=round(bandwidth.gbps(nbytes, ms), 1))
    if ceiling:
        row["fraction"] = round(row["gbps"] / ceiling, 4)
        row["fraction_2pass"] = round(bandwidth.gbps(least_hbm_bytes(T, V, element_size), ms) / ceiling, 4)
    return row


def measure_group(impls: dict[str, Impl], want_loss: float, *, T: int, dtype: torch.dtype, part: str,
                  rounds: int, ceiling: float | None, time_ms: Callable, peak: Callable,
                  errors: dict[str, str] | None = None, extra: dict | None = None) -> list[dict]:
    """Check each implementation's first call, read its peak memory, then time all of them in turns."""
    label = {torch.bfloat16: "bf16", torch.float32: "fp32", torch.float16: "fp16"}[dtype]
    shape = {"part": part, "T": T, "V": V, "dtype": label, **(extra or {})}
    rows: dict[str, dict] = {}
    timed: dict[str, Callable] = {}
    for name, impl in impls.items():
        row = {"kernel": name, **shape}
        try:
            loss = float(impl.call())
            row["loss_error"] = abs(loss - want_loss) / abs(want_loss)
            if row["loss_error"] > 1e-2:
                row["error"] = f"wrong loss: {loss:.6g}, float64 {want_loss:.6g}"
            else:
                row["peak_extra_bytes"] = peak(impl)
                timed[name] = impl.call
        except Exception as exc:  # one implementation failing (out of memory, say) must not lose the others
            row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        rows[name] = row
    for name, why in (errors or {}).items():
        rows[name] = {"kernel": name, **shape, "error": why}
    runs: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(rounds):
        for name, fn in list(timed.items()):
            try:
                runs[name].append(time_ms(fn))
            except Exception as exc:
                rows[name]["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                del timed[name]
    size = torch.empty((), dtype=dtype).element_size()
    for name, times in runs.items():
        if times and "error" not in rows[name]:
            rows[name].update(ms=round(statistics.median(times), 5), ms_runs=[round(t, 5) for t in times])
            _figures(rows[name], T, size, ceiling)
        if rows[name].get("peak_extra_bytes") is not None:
            rows[name]["peak_extra_mib"] = round(rows[name]["peak_extra_bytes"] / 2**20, 1)
    return list(rows.values())


# --- the parts ------------------------------------------------------------------------------------

class Run:
    """The state of one benchmark run: where rows go, the clock, the budget."""

    def __init__(self, *, device: str = "cuda", time_ms: Callable | None = None, peak: Callable = cuda_peak,
                 ceiling: float | None = None, compile: bool = True, out: Path | None = None, prefix: str = "h200",
                 meta: dict | None = None, budget_s: float = BUDGET_S):
        from grader import bandwidth

        self.device, self.peak, self.compile = device, peak, compile
        self.time_ms = time_ms or (lambda fn: bandwidth.time_ms(fn))
        self.ceiling, self.out, self.prefix, self.meta = ceiling, out, prefix, meta or {}
        self.started, self.budget_s = time.time(), budget_s
        self.rows: list[dict] = []
        self.sweep_rows: list[dict] = []
        self.notes: list[str] = []
        self.liger, self.liger_note = liger_function()
        self.generator = torch.Generator(device=device).manual_seed(10)

    def over_budget(self, part: str) -> bool:
        spent = time.time() - self.started
        if spent > self.budget_s:
            self.notes.append(f"part {part} skipped: {spent:.0f} s spent of a {self.budget_s:.0f} s budget")
            return True
        return False

    def save(self) -> None:
        if self.out is None:
            return
        self.out.mkdir(parents=True, exist_ok=True)
        meta = {**self.meta, "liger": self.liger_note, "notes": self.notes,
                "seconds": round(time.time() - self.started, 1)}
        for stem, rows in (("ex10-cross-entropy", self.rows), ("ex10-sweep", self.sweep_rows)):
            if rows:
                command = "python -m tools.benchmarks.ex10_cross_entropy --out DIR"
                (self.out / f"{self.prefix}-{stem}.json").write_text(
                    json.dumps({"meta": {**meta, "command": command}, "rows": rows}, indent=1) + "\n")

    def _liger_error(self) -> dict[str, str]:
        return {} if self.liger is not None else {"liger": self.liger_note}

    def by_t(self, sizes=BY_T) -> None:
        from solutions.ex10_cross_entropy import cross_entropy

        compiled = None
        if self.compile:
            import torch._dynamo as dynamo

            dynamo.reset()
            compiled = torch.compile(lambda x, t: F.cross_entropy(x.float(), t))
        for T in sizes:
            if self.over_budget(f"by_T at T = {T}"):
                break
            kernels = {"solution": cross_entropy, "solution_again": cross_entropy}
            impls, base = implementations(T, torch.bfloat16, self.device, with_compile=compiled, liger=self.liger,
                                          kernels=kernels, generator=self.generator)
            want = reference_loss(base, impls["solution"].target)
            del base
            self.rows += measure_group(impls, want, T=T, dtype=torch.bfloat16, part="by_T", rounds=ROUNDS,
                                       ceiling=self.ceiling, time_ms=self.time_ms, peak=self.peak,
                                       errors=self._liger_error())
            del impls
            self._free()
            self.save()

    def fp32(self, T: int = FP32_T) -> None:
        from solutions.ex10_cross_entropy import cross_entropy

        if self.over_budget("fp32"):
            return
        impls, base = implementations(T, torch.float32, self.device, with_compile=None, liger=self.liger,
                                      kernels={"solution": cross_entropy}, generator=self.generator)
        want = reference_loss(base, impls["solution"].target)
        del base
        self.rows += measure_group(impls, want, T=T, dtype=torch.float32, part="fp32", rounds=2,
                                   ceiling=self.ceiling, time_ms=self.time_ms, peak=self.peak,
                                   errors=self._liger_error())
        del impls
        self._free()
        self.save()

    def sweep(self, T: int = SWEEP_T, launches=LAUNCHES) -> None:
        from solutions import ex10_cross_entropy as solution

        if self.over_budget("sweep"):
            return
        shipped = solution.BLOCK_BYTES // 2
        kernels: dict[str, Callable] = {"solution": solution.cross_entropy}
        for block, warps in launches:
            if (block, warps) != (shipped, solution.NUM_WARPS):
                kernels[f"variant_b{block}_w{warps}"] = launcher(solution.cross_entropy_kernel, block, warps)
        # "evict" and "per_lane": the solution's own block and warps with the other kernel.
        kernels["evict"] = launcher(evict_kernel, shipped, solution.NUM_WARPS)
        kernels["evict_b8192_w8"] = launcher(evict_kernel, 8192, 8)
        kernels["per_lane"] = launcher(per_lane_kernel, shipped, solution.NUM_WARPS)
        kernels["per_lane_b8192_w16"] = launcher(per_lane_kernel, 8192, 16)
        impls, base = implementations(T, torch.bfloat16, self.device, with_compile=None, liger=None,
                                      kernels=kernels, generator=self.generator, with_eager=False)
        want = reference_loss(base, impls["solution"].target)
        del base
        self.sweep_rows += measure_group(impls, want, T=T, dtype=torch.bfloat16, part="sweep", rounds=2,
                                         ceiling=self.ceiling, time_ms=self.time_ms, peak=self.peak)
        del impls
        self._free()
        self.save()

    def compile_static(self, T: int = SWEEP_T) -> None:
        """torch.compile with dynamic=False at the grader's size, in turns with the solution (one more
        compile: last, and only when the budget allows)."""
        from solutions.ex10_cross_entropy import cross_entropy

        if not self.compile or self.over_budget("compile_static"):
            return
        import torch._dynamo as dynamo

        dynamo.reset()
        static = torch.compile(lambda x, t: F.cross_entropy(x.float(), t), dynamic=False)
        impls, base = implementations(T, torch.bfloat16, self.device, with_compile=static, liger=None,
                                      kernels={"solution": cross_entropy}, generator=self.generator,
                                      with_eager=False)
        impls["compile_static"] = impls.pop("compile")
        impls["compile_static"].name = "compile_static"
        want = reference_loss(base, impls["solution"].target)
        del base
        self.sweep_rows += measure_group(impls, want, T=T, dtype=torch.bfloat16, part="static", rounds=2,
                                         ceiling=self.ceiling, time_ms=self.time_ms, peak=self.peak)
        del impls
        self._free()
        self.save()

    def _free(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    def parts(self) -> list[tuple[str, Callable[[], None]]]:
        return [("by_T", self.by_t), ("sweep", self.sweep), ("fp32", self.fp32), ("compile_static", self.compile_static)]

    def all(self) -> None:
        for name, part in self.parts():
            try:
                part()
            except Exception as exc:  # a broken part must not lose the others' rows
                self.notes.append(f"part {name} failed: {type(exc).__name__}: {str(exc)[:300]}")
                self.save()


def run() -> list[dict]:
    """The common driver's entry point (``python -m tools.benchmarks ex10_cross_entropy``): the by_T and
    fp32 parts as rows (the sweep goes to its own file only through ``--out``)."""
    from tools import benchmarks

    state = Run(ceiling=benchmarks.ceiling_gbps())
    for name, part in (("by_T", state.by_t), ("fp32", state.fp32)):
        try:
            part()
        except Exception as exc:
            state.notes.append(f"part {name} failed: {type(exc).__name__}: {exc}")
    return state.rows


def table(rows: list[dict]) -> str:
    lines = [f"{'part':<6} {'kernel':<22} {'T':>6} {'dtype':<5} {'ms':>8} {'frac':>6} {'2pass':>6} {'extra MiB':>10}"]
    for r in rows:
        if r.get("error"):
            lines.append(f"{r['part']:<6} {r['kernel']:<22} {r['T']:>6} {r['dtype']:<5} {r['error'][:60]}")
            continue
        frac = f"{r['fraction']:.1%}" if r.get("fraction") is not None else "-"
        two = f"{r['fraction_2pass']:.1%}" if r.get("fraction_2pass") is not None else "-"
        mib = f"{r['peak_extra_mib']:.0f}" if r.get("peak_extra_mib") is not None else "-"
        lines.append(f"{r['part']:<6} {r['kernel']:<22} {r['T']:>6} {r['dtype']:<5} {r.get('ms', 0):8.3f} "
                     f"{frac:>6} {two:>6} {mib:>10}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmarks.ex10_cross_entropy")
    parser.add_argument("--out", type=Path, required=True, help="folder for the two JSON files")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    args = parser.parse_args(argv)
    from tools import benchmarks

    header = benchmarks.meta()
    prefix = header["gpu"].lower().replace("nvidia", "").strip().replace(" ", "-")
    state = Run(ceiling=header["ceiling_gbps"], compile=not args.no_compile, out=args.out, prefix=prefix,
                meta=header)
    print(f"{header['gpu']}, ceiling {header['ceiling_gbps']} GB/s; {state.liger_note}", flush=True)
    state.all()
    state.save()
    print(table(state.rows + state.sweep_rows))
    for note in state.notes:
        print(note)
    return 0 if any(r["kernel"] == "solution" and r.get("ms") for r in state.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
