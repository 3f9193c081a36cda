"""The softmax sweep shared by the benchmarks of exercise 4 (and 5's hook), and the PyTorch peers.

Shapes, fp32: M = 4096 rows with N = 256 ... 32768 columns, and N = 4096 columns with M = 32 ...
16384 rows. Every kernel is checked against ``torch.softmax`` before it is timed, then the kernels
of one shape are timed in turns (two rounds: the card's state drifts, and kernels compared on one
plot should see the same states); a kernel that fails or cannot run at a shape gets a row with its
error instead of a time (the failure is a finding too). Exercise 3's benchmark
(`tools.benchmarks.ex03_softmax`) has a sweep of its own: two dtypes, exercises 3, 4 and 5 in the
same turns, and three ways of calling torch.compile.

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
from grader import bandwidth
from tools.benchmarks import ceiling_gbps, time_rows_in_turns

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


def checked(name: str, fn: Kernel, x: torch.Tensor, want: torch.Tensor) -> str | None:
    """None when ``fn(x)`` matches ``want``, else what went wrong (a wrong answer or the exception)."""
    try:
        out = fn(x)
        torch.cuda.synchronize()
        if isinstance(out, torch.Tensor) and out.shape == want.shape and bool(torch.allclose(out, want, rtol=1e-4, atol=1e-6)):
            return None
        worst = (out - want).abs().max().item() if isinstance(out, torch.Tensor) and out.shape == want.shape else None
        return f"AssertionError: wrong answer (max abs error {worst})"
    except Exception as exc:  # one kernel failing at one shape must not lose the rest of the sweep
        return f"{type(exc).__name__}: {str(exc)[:200]}"


def persistent_kernel() -> Kernel | None:
    """Exercise 4's ``softmax_persistent`` when its solution exists, else None."""
    try:
        from solutions.ex04_softmax_persistent import softmax_persistent
    except ImportError:
        return None
    return softmax_persistent


def timed_in_turns(kernels: list[tuple[str, Kernel, dict]], x: torch.Tensor, want: torch.Tensor, **shape) -> list[dict]:
    """One row per kernel at one shape: each checked against ``want``, then all timed in turns (two rounds,
    `time_rows_in_turns`: kernels compared on one plot see the same states of the card); a kernel that
    fails gets a row with its error."""
    rows, ready, keys = [], {}, {}
    for name, fn, more in kernels:
        error = checked(name, fn, x, want)
        if error:
            rows.append({"kernel": name, **shape, **more, "ms": None, "error": error})
        else:
            ready[name], keys[name] = (lambda fn=fn: fn(x)), more
    nbytes = minimum_bytes(x.shape[0], x.shape[1], x.element_size())
    ceiling = ceiling_gbps()
    for name, row in time_rows_in_turns(ready, rounds=2, **shape).items():
        achieved = bandwidth.gbps(nbytes, row["ms"])
        rows.append({**row, **keys[name], "bytes": nbytes, "gbps": round(achieved, 1),
                     "fraction": round(achieved / ceiling, 4)})
    return rows


def sweep(kernels: list[tuple[str, Kernel]], *, shapes=SHAPES, with_compile: bool = False,
          extra: Callable[[torch.Tensor], list[tuple[str, Kernel, dict]]] | None = None) -> list[dict]:
    """Rows for every kernel at every shape (fp32), plus torch.compile and per-shape extras, the
    kernels of one shape timed in turns.

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
        contenders = [(name, fn, {}) for name, fn in kernels]
        if with_compile:
            contenders += [("compile", compiled_softmax(f"softmax_static_{m}x{n}", dynamic=False), {}),
                           ("variant_compile_shared_default", shared_compile, {})]
        contenders += extra(x) if extra else []
        rows += timed_in_turns(contenders, x, want, **shape)
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
