"""The softmax sweep shared by the benchmarks of exercise 4 (and 5's hook), and the PyTorch peers.

Shapes, fp32: M = 4096 rows with N = 256 ... 32768 columns, and N = 4096 columns with M = 32 ...
16384 rows. Every kernel is checked against ``torch.softmax`` before it is timed; a kernel that
fails or cannot run at a shape gets a row with its error instead of a time (the failure is a
finding too). Exercise 3's benchmark (`tools.benchmarks.ex03_softmax`) has a sweep of its own:
two dtypes, kernels timed in turns, and three ways of calling torch.compile.

Byte model: ``2 * M * N * 4`` bytes (one read, one write), the minimum for softmax, so a kernel
that reads a row twice (the online softmax, a looped reduction) shows it as a lower fraction.

    python -m tools.benchmarks ex04_softmax_persistent --out docs/measurements
    python -m tools.benchmarks softmax_sweep      # every kernel in one table (not plotted)

Exercise 5's solution is timed too when ``solutions/ex05_online_softmax.py`` defines
``softmax_online`` (`online_kernel`).
"""

from __future__ import annotations

from typing import Callable

import torch

from grader.exercises.ex03_softmax.spec import minimum_bytes
from tools.benchmarks import failed_row, time_row

#: Row lengths at M = 4096.
N_SWEEP = (256, 1024, 2048, 4096, 8192, 16384, 32768)
#: Row counts at N = 4096.
M_SWEEP = (32, 256, 1024, 16384)
SHAPES = [(4096, n) for n in N_SWEEP] + [(m, 4096) for m in M_SWEEP]

Kernel = Callable[[torch.Tensor], torch.Tensor]


def naive_softmax(x: torch.Tensor) -> torch.Tensor:
    """Five PyTorch kernels, each a full pass through HBM: about 8MN elements moved, 4x the minimum."""
    m = x.max(dim=1, keepdim=True).values  # read MN, write M
    z = x - m  # read MN, write MN
    e = torch.exp(z)  # read MN, write MN
    s = e.sum(dim=1, keepdim=True)  # read MN, write M
    return e / s  # read MN, write MN


def eager_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def compiled_softmax(name: str = "softmax_compiled", **options) -> Kernel:
    """``torch.compile`` of a copy of `eager_softmax` with a code object of its own.

    Dynamo keys compiled code, recompile counts and its memory of changing sizes on the code object:
    wrappers of one function share them, so one could change what another compiles (and
    ``torch._dynamo.reset()`` would forget every compiled function at once, not one).
    """
    from tools.benchmarks.inductor_capture import fresh_function

    return torch.compile(fresh_function(eager_softmax, name), **options)


def online_kernel() -> Kernel | None:
    """Exercise 5's ``softmax_online`` when its solution exists, else None (the hook for ex05)."""
    try:
        from solutions.ex05_online_softmax import softmax_online
    except ImportError:
        return None
    return softmax_online


def timed(name: str, fn: Kernel, x: torch.Tensor, want: torch.Tensor, **shape) -> dict:
    """One row: check ``fn(x)`` against ``want``, then time it; or a row with the error."""
    try:
        out = fn(x)
        torch.cuda.synchronize()
        if not (isinstance(out, torch.Tensor) and out.shape == want.shape
                and bool(torch.allclose(out, want, rtol=1e-4, atol=1e-6))):
            worst = (out - want).abs().max().item() if isinstance(out, torch.Tensor) and out.shape == want.shape else None
            raise AssertionError(f"wrong answer (max abs error {worst})")
        return time_row(name, lambda: fn(x), minimum_bytes(x.shape[0], x.shape[1], x.element_size()), **shape)
    except Exception as exc:  # one kernel failing at one shape must not lose the rest of the sweep
        return failed_row(name, exc, **shape)


def sweep(kernels: list[tuple[str, Kernel]], *, shapes=SHAPES, with_compile: bool = False,
          extra: Callable[[torch.Tensor], list[tuple[str, Kernel, dict]]] | None = None) -> list[dict]:
    """Rows for every kernel at every shape (fp32), plus torch.compile and per-shape extras.

    ``extra(x)`` returns ``(name, kernel, additional row keys)`` for variants timed at that
    shape only (a different num_warps, a different pipeline depth).
    """
    rows: list[dict] = []
    # ONE torch.compile'd function called on shape after shape with default settings: after the
    # second shape it recompiles with a symbolic row length. Timed beside the per-shape compile.
    shared_compile = compiled_softmax("softmax_shared_default") if with_compile else None
    for m, n in shapes:
        x = torch.randn(m, n, device="cuda")
        want = torch.softmax(x, dim=-1)
        shape = {"M": m, "N": n, "dtype": "fp32"}
        for name, fn in kernels:
            rows.append(timed(name, fn, x, want, **shape))
        if with_compile:
            rows.append(timed("compile", compiled_softmax(f"softmax_static_{m}x{n}", dynamic=False), x, want, **shape))
            rows.append(timed("variant_compile_shared_default", shared_compile, x, want, **shape))
        for name, fn, keys in (extra(x) if extra else []):
            rows.append(timed(name, fn, x, want, **shape, **keys))
        del x, want
        torch.cuda.empty_cache()
    return rows


def run() -> list[dict]:
    """Every kernel in one table: the baselines, exercises 3 and 4, and 5 when it exists."""
    from solutions.ex03_softmax import softmax
    from solutions.ex04_softmax_persistent import softmax_persistent

    kernels = [("naive", naive_softmax), ("torch", eager_softmax), ("ex03_softmax", softmax),
               ("ex04_softmax_persistent", softmax_persistent)]
    online = online_kernel()
    if online is not None:
        kernels.append(("ex05_softmax_online", online))
    return sweep(kernels, with_compile=True)
