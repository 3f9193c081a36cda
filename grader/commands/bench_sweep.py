"""`grade bench N`: sweep sizes on a GPU, your kernel against PyTorch and the copy ceiling.

Each exercise's manifest says which sizes to sweep (its ``[bench]`` table) and names a workload of
its folder's bench.py (``WORKLOADS``: how to make the inputs, which PyTorch baselines to time); this
module is the mechanism and knows no exercise. The byte model is not
repeated here: it is the spec's function the manifest names (``byte_model``, ``minimum_bytes``),
called with the shape's values and ``element_size``, so the bench and the grader can never
disagree about what "GB/s" means.

Each size times, with `grader.bandwidth.time_ms` (median, L2 flushed):

* **yours**: the learner's function, after checking its output against the first baseline;
  a wrong or failing result is kept as a row with an ``error`` and is not plotted;
* each **PyTorch baseline** (eager), and **torch.compile** of the first one where the config
  asks for it (where Inductor can fuse what eager cannot);
* **copy**: ``out.copy_(x)`` over the output's bytes, the best a memory-bound kernel of this size
  can hope for; the measured ceiling (`grader.bandwidth.measure_ceiling`) is drawn as a line.

The sweep takes its timer, ceiling and device as arguments, so the course's tests run it on
CPU with a fake timer and check the table, JSON and plot it writes.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from grader import catalogue
from grader.wire.results import Kind

if TYPE_CHECKING:
    import torch

# Torch is imported by the functions that use it, not with this module: without a GPU, `grade bench`
# says so before anything imports torch (2.8 s for that sentence before, most of it torch's import;
# docs/measurements/cpu-grading-speed.json).


def _float32() -> "torch.dtype":
    import torch

    return torch.float32


def _tolerances() -> dict:
    import torch

    return {torch.float32: (1e-4, 1e-4), torch.float16: (2e-3, 1e-2), torch.bfloat16: (1e-2, 3e-2)}

# --- what to sweep, per exercise ----------------------------------------------------------------

Shape = dict  # e.g. {"n": 1 << 20} or {"m": 4096, "n": 1024}


@dataclass(frozen=True)
class BenchConfig:
    """How `grade bench` sweeps one exercise."""

    #: The shapes to sweep, smallest first; keys are the byte model's parameter names.
    sizes: tuple[Shape, ...]
    #: ``make_inputs(shape, dtype, device) -> tuple`` of positional arguments for the learner's function.
    make_inputs: Callable[[Shape, torch.dtype, str], tuple]
    #: Eager PyTorch baselines by name; the first one is also the reference for checking your output.
    baselines: dict[str, Callable[..., torch.Tensor]]
    #: Which shape key is the x axis of the plot, and how to label it.
    x_key: str
    x_label: str
    #: Also time ``torch.compile`` of the first baseline.
    compile: bool = False
    #: "gbps" (memory-bound: bytes from the spec's minimum_bytes) or "tflops" (attention).
    metric: str = "gbps"
    #: ``flops(shape) -> float`` where metric == "tflops".
    flops: Callable[[Shape], float] | None = None
    dtype: torch.dtype = field(default_factory=_float32)
    #: What one element of the output is compared with (abs, rel) against the first baseline.
    tolerance: dict = field(default_factory=_tolerances)
    #: A sentence under the table.
    note: str = ""
    #: Picks the tensor to check from what the learner's function returns (exercise 9's forward
    #: returns ``(y, rstd)``: y is checked); None when it returns the tensor itself.
    output: Callable[[Any], Any] | None = None
    #: ``copy_source(args) -> Tensor``: the tensor the copy row copies, where the output is not the bulk
    #: of the traffic (exercise 10 returns a 0-dim loss and writes its gradient into its first input).
    copy_source: Callable[[tuple], torch.Tensor] | None = None


@dataclass(frozen=True)
class Workload:
    """The code half of a bench: how to make the inputs and which PyTorch baselines to time, in the
    ``WORKLOADS`` of the exercise folder's bench.py. The data half (sizes, dtype, labels) is the
    ``[bench]`` table of the exercise's manifest, whose ``workload`` names one of them."""

    make_inputs: Callable[[Shape, torch.dtype, str], tuple]
    baselines: dict[str, Callable[..., torch.Tensor]]
    metric: str = "gbps"
    flops: Callable[[Shape], float] | None = None
    tolerance: dict | None = None
    output: Callable[[Any], Any] | None = None
    copy_source: Callable[[tuple], torch.Tensor] | None = None


#: The module of an exercise's folder that holds its workloads: ``WORKLOADS``, by the name the manifest's
#: ``[bench] workload`` gives.
WORKLOAD_MODULE = "bench"


def workload_of(exercise: catalogue.Exercise) -> Workload | None:
    """The workload the manifest names, from the exercise folder's bench.py (None when it has none)."""
    name = f"{exercise.spec_module.rsplit('.', 1)[0]}.{WORKLOAD_MODULE}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as missing:
        if missing.name != name:
            raise
        return None
    return getattr(module, "WORKLOADS", {}).get(exercise.bench.workload)


#: The element types a manifest's ``[bench] dtype`` may name (torch's names).
DTYPE_NAMES = ("float32", "float16", "bfloat16")


def config_of(exercise: catalogue.Exercise) -> BenchConfig:
    """The sweep of ``exercise``: its manifest's ``[bench]`` with the code of the workload it names."""
    bench = exercise.bench
    if bench is None:
        raise no_bench(exercise)
    workload = workload_of(exercise)
    if workload is None:
        raise BenchUnavailable(f"no bench for exercise {exercise.number}: its manifest names the workload "
                               f"{bench.workload!r}, which {exercise.stem}/{WORKLOAD_MODULE}.py does not have")
    extra = {"tolerance": workload.tolerance} if workload.tolerance is not None else {}
    return BenchConfig(sizes=tuple(dict(size) for size in bench.sizes), make_inputs=workload.make_inputs,
                       baselines=dict(workload.baselines), x_key=bench.x_key, x_label=bench.x_label,
                       compile=bench.compile, metric=workload.metric, flops=workload.flops,
                       dtype=_dtype(bench.dtype), note=bench.note, output=workload.output,
                       copy_source=workload.copy_source, **extra)


def _dtype(name: str) -> "torch.dtype":
    import torch

    if name not in DTYPE_NAMES:
        raise KeyError(name)
    return getattr(torch, name)


KERNEL_LABELS = {"yours": "your kernel", "compile": "torch.compile", "copy": "copy (same bytes)"}


class BenchUnavailable(Exception):
    """A sentence saying why `grade bench N` cannot run (exit status 1, not a usage error)."""


# --- the byte model, from the spec -----------------------------------------------------------------

def byte_model(exercise: catalogue.Exercise, config: BenchConfig) -> Callable[[Shape, int], int] | None:
    """``nbytes(shape, element_size)`` from the spec's byte model (the manifest's ``byte_model``,
    ``minimum_bytes``); None for a TFLOP/s bench.

    Raises BenchUnavailable when the spec, or its byte model, does not exist yet.
    """
    if not exercise.spec_file.is_file():
        shown = exercise.spec_file.relative_to(exercise.base).as_posix()
        raise BenchUnavailable(f"no bench for exercise {exercise.number} yet: its checks "
                               f"({shown}) are not written yet")
    if config.metric != "gbps":
        return None
    try:
        spec = importlib.import_module(exercise.spec_module)
    except Exception as exc:
        raise BenchUnavailable(f"no bench for exercise {exercise.number}: importing its spec failed "
                               f"({type(exc).__name__}: {exc})") from None
    name = exercise.byte_model or "minimum_bytes"
    fn = getattr(spec, name, None)
    if fn is None:
        raise BenchUnavailable(f"no bench sizes for exercise {exercise.number} yet: its spec defines no "
                               f"`{name}(...)` byte model")
    return bytes_from(fn, getattr(spec, "bench_arguments", None))


def bytes_from(minimum_bytes: Callable[..., int],
               arguments: Callable[[Shape], tuple] | None = None) -> Callable[[Shape, int], int]:
    """``nbytes(shape, element_size)`` for a spec's ``minimum_bytes``.

    Every spec's byte model takes the shape's dimensions in the order the bench lists them, then the
    element size (``minimum_bytes(m, n, element_size)``; docs/contributing.md). A spec whose byte model
    takes other arguments (exercise 8's takes the list of cache lengths) also defines
    ``bench_arguments(shape) -> tuple``, and those come before the element size instead.
    """
    def nbytes(shape: Shape, element_size: int) -> int:
        values = arguments(shape) if arguments is not None else tuple(shape.values())
        return int(minimum_bytes(*values, element_size))

    return nbytes


# --- the sweep --------------------------------------------------------------------------------------

def size_label(shape: Shape) -> str:
    return " ".join(f"{k}={v}" for k, v in shape.items())


#: Elements compared at a time: the float64 comparison of a 512 MiB output would need gigabytes at once.
COMPARE_CHUNK = 1 << 24


def _result_error(out: Any, expected: torch.Tensor, tolerance: tuple[float, float]) -> str | None:
    import torch

    if not isinstance(out, torch.Tensor):
        return f"your function returned {type(out).__name__}, not a tensor"
    if out.shape != expected.shape:
        return f"your output has shape {tuple(out.shape)}, expected {tuple(expected.shape)}"
    atol, rtol = tolerance
    got, want = out.reshape(-1), expected.reshape(-1)
    bad, worst = 0, 0.0
    for start in range(0, want.numel(), COMPARE_CHUNK):
        o = got[start:start + COMPARE_CHUNK].double()
        e = want[start:start + COMPARE_CHUNK].double()
        diff = (o - e).abs()
        bad += int((~(diff <= atol + rtol * e.abs())).sum())  # NaN counts as bad
        worst = max(worst, float(diff.nan_to_num(float("inf")).max()))
    if bad:
        return (f"wrong result at this size ({bad} of {out.numel()} elements off, max |difference| {worst:.3g}): "
                "`grade exercise N` says where")
    return None


def _describe(exc: BaseException) -> tuple[str, bool]:
    """A sentence for an exception and whether the CUDA context is lost (nothing more can run)."""
    import torch

    from grader.wire.failures import describe_exception

    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return "out of memory at this size", False
    failure = describe_exception(exc, None)
    return str(failure), failure.kind == Kind.FATAL


def sweep(config: BenchConfig, learner_fn: Callable | None, *, device: str, time_ms: Callable[[Callable], float],
          ceiling_gbps: float | None, nbytes: Callable[[Shape, int], int] | None, dtype: torch.dtype | None = None,
          compile: bool = True, learner_error: str | None = None, free_bytes: int | None = None,
          on_step: Callable[[str], None] | None = None) -> list[dict]:
    """Time every kernel at every size; one row per (size, kernel).

    Rows: ``{"kernel", <shape keys>, "size", "ms", "bytes", "gbps", "fraction"}`` for GB/s benches,
    ``"tflops"`` for attention, or ``"error"`` (a sentence) when the kernel could not be timed.
    ``learner_fn`` None means the learner's file did not import (``learner_error`` says why).
    """
    import torch

    dtype = dtype or config.dtype
    element_size = torch.empty((), dtype=dtype).element_size()
    first_baseline = next(iter(config.baselines))
    kernels = ["yours", *config.baselines]
    if compile and config.compile:
        kernels.append("compile")
    if config.metric == "gbps":
        kernels.append("copy")
    rows: list[dict] = []
    lost: str | None = None  # the CUDA context died: every later row says so

    for shape in config.sizes:
        base = {**shape, "size": size_label(shape)}

        def add(kernel: str, **values) -> None:
            rows.append({"kernel": kernel, **base, **values})
            if on_step:
                on_step(f"{base['size']} · {KERNEL_LABELS.get(kernel, kernel)}")

        moved = nbytes(shape, element_size) if nbytes else None
        # Inputs and output (the minimum bytes), plus the reference output and the copy's: about 3x.
        needed = 3 * moved if moved else None
        if lost is not None or (needed and free_bytes and needed > free_bytes):
            reason = lost or (f"skipped: needs about {needed / 2**30:.1f} GiB, "
                              f"{free_bytes / 2**30:.1f} GiB free on this GPU")
            for kernel in kernels:
                add(kernel, error=reason)
            continue
        try:
            args = config.make_inputs(shape, dtype, device)
            expected = config.baselines[first_baseline](*args)
        except Exception as exc:
            reason, fatal = _describe(exc)
            for kernel in kernels:
                add(kernel, error=f"inputs could not be made: {reason}")
            if fatal:
                lost = "not run: the CUDA context was lost earlier in the sweep"
            continue
        tol = config.tolerance.get(dtype, (1e-2, 1e-2))
        for kernel in kernels:
            if lost is not None:
                add(kernel, error=lost)
                continue
            try:
                if kernel == "yours":
                    if learner_fn is None:
                        add(kernel, error=learner_error or "your file did not import")
                        continue
                    fn = learner_fn
                    result = fn(*args)
                    if config.output is not None:
                        try:
                            result = config.output(result)
                        except Exception as exc:
                            add(kernel, error=f"could not read the output from what your function returned "
                                              f"({type(exc).__name__}: {exc})")
                            continue
                    problem = _result_error(result, expected, tol)
                    if problem:
                        add(kernel, error=problem)
                        continue
                elif kernel == "compile":
                    fn = _compiled(config.baselines[first_baseline])
                    fn(*args)  # compiles now, outside the timing
                elif kernel == "copy":
                    src = config.copy_source(args) if config.copy_source else expected
                    dst = torch.empty_like(src)
                    add(kernel, **_figures(config, shape, time_ms(lambda: dst.copy_(src)),
                                           2 * src.numel() * src.element_size(), ceiling_gbps))
                    continue
                else:
                    fn = config.baselines[kernel]
                ms = time_ms(lambda: fn(*args))
                add(kernel, **_figures(config, shape, ms, moved, ceiling_gbps))
            except Exception as exc:
                reason, fatal = _describe(exc)
                add(kernel, error=reason if kernel != "compile" else f"torch.compile failed: {reason}")
                if fatal:
                    lost = f"not run: the CUDA context was lost at {base['size']} ({reason})"
        del args, expected
        if device == "cuda" and lost is None:
            try:
                torch.cuda.empty_cache()
            except Exception:  # a lost context can surface only here
                lost = "not run: the CUDA context was lost earlier in the sweep"
    return rows


def _compiled(fn: Callable) -> Callable:
    """A fresh ``torch.compile`` per size: past dynamo's recompile limit (8 shapes) it would quietly
    fall back to eager, and the curve would show eager PyTorch under the name torch.compile."""
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    return torch.compile(fn, dynamic=False)


def _figures(config: BenchConfig, shape: Shape, ms: float, nbytes: int | None, ceiling_gbps: float | None) -> dict:
    row: dict[str, Any] = {"ms": round(ms, 5)}
    if config.metric == "tflops" and config.flops is not None:
        row["tflops"] = round(config.flops(shape) / (ms * 1e-3) / 1e12, 1)
        return row
    if nbytes:
        achieved = nbytes / (ms * 1e-3) / 1e9
        row.update(bytes=nbytes, gbps=round(achieved, 1))
        if ceiling_gbps:
            row["fraction"] = round(achieved / ceiling_gbps, 4)
    return row


# --- table, JSON, plot --------------------------------------------------------------------------

def kernels_in(rows: list[dict]) -> list[str]:
    seen: list[str] = []
    for row in rows:
        if row["kernel"] not in seen:
            seen.append(row["kernel"])
    return seen


def _cell(row: dict | None, metric: str) -> str:
    if row is None:
        return "–"
    if row.get("error"):
        return "✗ " + row["error"][:60] + ("…" if len(row["error"]) > 60 else "")
    if metric == "tflops":
        return f"{row['tflops']:.0f} TFLOP/s"
    text = f"{row['gbps']:.0f} GB/s"
    return text + (f" ({row['fraction']:.0%})" if row.get("fraction") is not None else "")


def table(rows: list[dict], config: BenchConfig, title: str):
    from rich.table import Table

    kernels = kernels_in(rows)
    out = Table(title=title, title_justify="left")
    out.add_column("size")
    for kernel in kernels:
        out.add_column(KERNEL_LABELS.get(kernel, kernel), justify="right")
    for label in dict.fromkeys(r["size"] for r in rows):
        by_kernel = {r["kernel"]: r for r in rows if r["size"] == label}
        out.add_row(label, *[_cell(by_kernel.get(k), config.metric) for k in kernels])
    return out


def plot(rows: list[dict], config: BenchConfig, *, title: str, ceiling_gbps: float | None, path: Path) -> Path:
    """A PNG: one line per kernel (failed points left out), the measured ceiling as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    value = "tflops" if config.metric == "tflops" else "gbps"
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=120)
    styles = {"yours": dict(color="#d62728", linewidth=2.5, marker="o"),
              "copy": dict(color="#7f7f7f", linestyle=":", marker=".")}
    for kernel in kernels_in(rows):
        points = [(r[config.x_key], r[value]) for r in rows if r["kernel"] == kernel and r.get(value) is not None]
        if not points:
            continue
        xs, ys = zip(*points)
        ax.plot(xs, ys, label=KERNEL_LABELS.get(kernel, kernel), **styles.get(kernel, dict(marker="s")))
    if ceiling_gbps and value == "gbps":
        ax.axhline(ceiling_gbps, color="black", linestyle="--", linewidth=1)
        ax.annotate(f"measured ceiling {ceiling_gbps:.0f} GB/s", xy=(0.01, ceiling_gbps), xycoords=("axes fraction", "data"),
                    va="bottom", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(config.x_label)
    ax.set_ylabel("TFLOP/s" if value == "tflops" else "GB/s (minimum bytes / time)")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def write_outputs(rows: list[dict], config: BenchConfig, *, meta: dict, folder: Path, stem: str,
                  ceiling_gbps: float | None, title: str) -> tuple[Path, Path | None, str | None]:
    """JSON always; the PNG when matplotlib is importable (else the reason). Returns (json, png, why)."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"{stem}.json"
    json_path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return json_path, None, "no PNG: matplotlib is not installed (`pip install matplotlib`)"
    return json_path, plot(rows, config, title=title, ceiling_gbps=ceiling_gbps, path=folder / f"{stem}.png"), None


# --- the command ------------------------------------------------------------------------------------

def exercise_benched(number: int) -> catalogue.Exercise:
    """Exercise ``number``, whose manifest names a bench; BenchUnavailable with a sentence otherwise."""
    try:
        exercise = catalogue.get(number)
    except KeyError:
        raise BenchUnavailable(f"no bench sizes for exercise {number} yet") from None
    if exercise.bench is None:
        raise no_bench(exercise)
    return exercise


def no_bench(exercise: catalogue.Exercise) -> BenchUnavailable:
    return BenchUnavailable(f"no bench for exercise {exercise.number}: {exercise.bench_unavailable}")


def config_for(number: int) -> BenchConfig:
    return config_of(exercise_benched(number))


def import_learner(path: Path) -> tuple[Any, str | None]:
    """(module, None), or (None, a sentence) when the file cannot be imported.

    The file runs here, in the `grade` process, through the learner's loader
    (`grader.learner.loader`) but not in the sandbox: the contract of `grade bench` is that it decides
    nothing. It writes no verdict, no progress (it reads the progress file, never writes it) and no
    score, and `grade batch` never benches a class's files; what it times is the learner's own
    file, with the learner's own rights, as ``python exercises/exNN_slug.py`` would run it. A file
    that patches the timer or the baselines fools only its own plot.
    """
    from grader.learner import loader
    from grader.wire.failures import describe_exception

    try:
        module = loader.import_file(path)
    except Exception as exc:
        return None, f"importing {path} failed: {describe_exception(exc, str(path))}"
    return module, None


def needs_a_gpu(number: int, why: str) -> BenchUnavailable:
    return BenchUnavailable(
        f"grade bench needs an NVIDIA GPU, and {why}: timing Triton's interpreter would measure "
        f"Python, not memory. `grade exercise {number}` checks correctness here; run `grade bench "
        f"{number}` on a machine with a GPU for the curves.")


def run(number: int, path: Path, console, *, out_dir: Path | None = None, compile: bool = True,
        dtype_name: str | None = None) -> int:
    """The `grade bench N` command: 0 when your kernel was timed, 1 when it could not be (with a sentence).

    Raises BenchUnavailable when the bench cannot run at all (no GPU, no bench for exercise N).
    """
    from grader import device
    from grader.learner import mode

    exercise = exercise_benched(number)
    if not device.driver_present():  # said before anything imports torch
        raise needs_a_gpu(number, "this machine has no GPU driver")
    import torch

    from grader import bandwidth
    from grader.commands import progress_file

    config = config_of(exercise)
    selected = mode.select()  # before anything imports Triton
    nbytes = byte_model(exercise, config)
    if selected != "gpu":
        from grader import device

        raise needs_a_gpu(number, "TRITON_INTERPRET=1 is set" if device.interpreter_requested() else
                          "torch sees no CUDA GPU (torch.cuda.is_available() is False)")
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}.get(dtype_name or "", config.dtype)

    module, problem = import_learner(path)
    function = getattr(module, exercise.function, None) if module is not None else None
    if module is not None and function is None:
        problem = f"{path} does not define `{exercise.function}`"
    if not progress_file.load().passed(number) and path == exercise.learner_path:
        console.print(f"[yellow]Exercise {number} is not passed yet: a wrong result is reported, not timed.[/]")

    info = bandwidth.gpu_info()
    ceiling, _ = bandwidth.measure_ceiling()
    from grader import device

    free = device.free_bytes(device.current())  # an emulated smaller card's, where one is asked for
    kernels = 1 + len(config.baselines) + (1 if compile and config.compile else 0) + (config.metric == "gbps")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("starting", total=len(config.sizes) * kernels)

        def step(what: str) -> None:
            bar.update(task, advance=1, description=what)

        rows = sweep(config, function, device="cuda", time_ms=bandwidth.time_ms, ceiling_gbps=ceiling.ceiling_gbps,
                     nbytes=nbytes, dtype=dtype, compile=compile, learner_error=problem, free_bytes=free,
                     on_step=step)

    import triton

    dtype_label = str(dtype).removeprefix("torch.")
    title = f"Exercise {number} · {exercise.function} · {info.name} · {dtype_label}"
    meta = {"exercise": number, "gpu": info.name, "driver": info.driver, "torch": torch.__version__,
            "triton": triton.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "ceiling_gbps": round(ceiling.ceiling_gbps, 1), "copy_gbps": round(ceiling.copy_gbps, 1),
            "add_gbps": round(ceiling.add_gbps, 1),
            "spec_gbps": None if (spec := bandwidth.spec_peak_gbps()) is None else round(spec, 1),
            "dtype": dtype_label, "learner_file": str(path), "command": f"grade bench {number}"}
    folder = out_dir or progress_file.state_dir() / "bench"
    stem = f"ex{number:02d}-{time.strftime('%Y%m%d-%H%M%S')}"
    json_path, png_path, why = write_outputs(rows, config, meta=meta, folder=folder, stem=stem,
                                             ceiling_gbps=ceiling.ceiling_gbps, title=title)
    report(console, rows, config, title=title, ceiling_gbps=ceiling.ceiling_gbps, json_path=json_path,
           png_path=png_path, png_problem=why)
    timed = any(r["kernel"] == "yours" and not r.get("error") for r in rows)
    return 0 if timed else 1  # 1: your kernel could not be timed at any size (the table says why)


def report(console, rows: list[dict], config: BenchConfig, *, title: str, ceiling_gbps: float | None,
           json_path: Path, png_path: Path | None, png_problem: str | None) -> None:
    console.print(table(rows, config, title))
    if ceiling_gbps and config.metric == "gbps":
        console.print(f"Percentages are of this GPU's measured ceiling, {ceiling_gbps:.0f} GB/s "
                      "(`grade doctor`); GB/s count the exercise's minimum bytes.")
    if config.note:
        console.print(config.note)
    yours = [r for r in rows if r["kernel"] == "yours"]
    failed = [r for r in yours if r.get("error")]
    if failed and len(failed) == len(yours):
        console.print(f"[red]Your kernel was not timed at any size: {failed[0]['error']}[/]")
    console.print(f"table and figures: {json_path}", soft_wrap=True)
    console.print(f"plot: {png_path}" if png_path else png_problem or "", soft_wrap=True)

