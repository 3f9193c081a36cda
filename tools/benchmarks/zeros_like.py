"""What a ``zeros_like`` before a kernel costs: exercise 1's add with its output from ``empty_like`` or
``zeros_like``, fp32, n = 2^12 ... 2^27 elements.

The kernel writes every element of ``out``, so the zeros are never read: ``zeros_like`` only adds a
fill kernel (a second launch) that writes ``out`` once more before the add writes it again. Bytes:
the add moves ``3 · n · 4`` (two reads, one write; ``bytes``, the exercise's byte model, for both
variants), the fill ``n · 4`` more (``bytes_moved``: ``4 · n · 4`` with ``zeros_like``). Where
the launch matters (n = 2^12, 48 KiB) the second launch is the cost; where the bytes matter
(n = 2^27, 1.5 GiB) the extra write is a third more bytes.

Per size, the variants are timed in turns (three rounds; ``empty_like_again`` is the same call as
``empty_like``, timed as a third contender to show the noise between two timings of one thing),
with fresh random inputs:

* ``ms``: wall time, ``triton.testing.do_bench``'s median (L2 flushed before every call; it includes
  the launches as the GPU sees them);
* ``gpu_ms`` and ``launches``: the kernels' own time per call and how many kernels one call ran,
  from ``torch.profiler`` (``kernel_names`` lists them);
* ``graph_ms``: the call as one node of a CUDA graph, after a read flush (`grader.bandwidth.time_ms_in_graph`):
  the GPU's time with no Python launcher in between;
* ``host_us``: the CPU's microseconds per call, calls back to back;
* on the ``zeros_like`` rows, ``extra_ms`` and ``extra_graph_ms``: what the fill added over ``empty_like``.

    python -m tools.benchmarks zeros_like --out docs/measurements
"""

from __future__ import annotations

import statistics

import torch
import triton

from grader import bandwidth
from grader.exercises.ex01_vector_add.spec import minimum_bytes
from tools.benchmarks import inductor_capture as capture

SIZES = (1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 27)
ROUNDS = 3
REP_MS = 50


def add_into(allocate):
    """Exercise 1's solution with its output allocated by ``allocate`` (``torch.empty_like`` or ``torch.zeros_like``)."""
    from solutions.ex01_vector_add import add_kernel

    def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = allocate(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        return out

    return add


VARIANTS = {"empty_like": add_into(torch.empty_like), "zeros_like": add_into(torch.zeros_like),
            "empty_like_again": add_into(torch.empty_like)}


def run() -> list[dict]:
    ceiling = bandwidth.measure_ceiling()[0].ceiling_gbps
    rows = []
    for n in SIZES:
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        want = x + y
        for name, add in VARIANTS.items():
            out = add(x, y)
            torch.cuda.synchronize()
            if not torch.equal(out, want):
                raise AssertionError(f"{name}: wrong sum at n = {n}")
        del want, out
        calls = {name: (lambda add=add: add(x, y)) for name, add in VARIANTS.items()}
        times = bandwidth.time_in_turns(calls, rounds=ROUNDS, rep_ms=REP_MS)
        nbytes = minimum_bytes(n, 4)
        by_name = {}
        for name, call in calls.items():
            ms = statistics.median(times[name])
            profile = capture.launches_per_call(call, calls=5)
            row = {"kernel": name, "n": n, "dtype": "fp32", "ms": round(ms, 5),
                   "ms_runs": [round(t, 5) for t in times[name]], "bytes": nbytes,
                   "bytes_moved": nbytes + (4 * n if name == "zeros_like" else 0),
                   "gbps": round(bandwidth.gbps(nbytes, ms), 1), "fraction": round(bandwidth.gbps(nbytes, ms) / ceiling, 4),
                   "launches": profile["kernels_per_call"], "gpu_ms": round(profile["gpu_us_per_call"] / 1000, 5),
                   "kernel_names": " + ".join(k["name"] for k in profile["launches"]),
                   "graph_ms": round(bandwidth.time_ms_in_graph(call), 5),
                   "host_us": capture.host_us_per_call(call)}
            by_name[name] = row
            rows.append(row)
        zeros, empty = by_name["zeros_like"], by_name["empty_like"]
        zeros["extra_ms"] = round(zeros["ms"] - empty["ms"], 5)
        zeros["extra_graph_ms"] = round(zeros["graph_ms"] - empty["graph_ms"], 5)
        del x, y, calls
        torch.cuda.empty_cache()
    return rows
