"""Profiling a model block with ``torch.profiler``: a plain list of rows for exercise 6.

`profile_block(block, x)` runs the block a few times to warm up, then ``iterations`` times under
``torch.profiler`` (CUDA activity on a GPU, with ``torch.cuda.synchronize`` before and after, so
every kernel of the measured passes is inside the window and nothing from the warm-up is), and
returns rows like::

    [{"name": "aten::addmm",    "calls": 4.0, "device_time_us": 1931.2},
     {"name": "aten::_softmax", "calls": 1.0, "device_time_us":  612.5},
     {"name": "softmax_kernel", "calls": 1.0, "device_time_us":  431.0},   # a Triton kernel
     ...]

one row per name, **per forward pass** (totals divided by ``iterations``), largest first. The
rows are JSON-serialisable and deliberately raw: deciding which rows are softmax and what share
of the time they hold is the learner's job in exercise 6.

What the numbers are
--------------------
* On a GPU, ``device_time_us`` is **GPU kernel time** (CUDA events from CUPTI, including memcpy
  and memset), never host time. Each kernel is charged to the PyTorch operator that launched it
  (``aten::_softmax`` for ``cunn_SoftMaxForward``, ``aten::addmm`` for the GEMMs of the linear
  layers), the way ``key_averages()`` reports an operator's *self* device time. A kernel that no
  operator launched (a Triton kernel called from Python) is a row of its own, under the kernel's
  name. The rows therefore partition the GPU time: their sum is the total kernel time of one
  pass, with nothing counted twice.

  Why not sum ``key_averages()`` directly: with the Kineto profiler it lists both the operators
  (``self_device_time_total`` = the kernels they launched) and the kernels themselves, so every
  kernel appears twice; PyTorch's own table sums only the device-side rows for its total.
  We read ``prof.events()`` instead: device events (``device_type`` CUDA, not user annotations)
  for the kernels, and each CPU operator's ``kernels`` list for who launched them. Only fields
  present from torch 2.0 to 2.13 are used (``time_range``, ``kernels``, ``device_type``,
  ``self_cpu_time_total``; ``is_user_annotation`` read with a default); if a torch version links
  no kernel to an operator, every kernel becomes its own row and the total is still right.
* On a CPU (no CUDA), ``device_time_us`` is each operator's **self CPU time**: the CPU is the
  device that ran it. Used for the course's placeholder profile and its tests, never for a claim
  about a GPU.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable

import torch

#: Warm-up passes before profiling: the first calls compile Triton kernels, pick cuBLAS
#: algorithms and grow the caching allocator, none of which belongs in a steady-state profile.
WARMUP = 3
#: Profiled passes; per-pass figures are the totals divided by this.
ITERATIONS = 10


def profile_block(block: torch.nn.Module, x: torch.Tensor, *, iterations: int = ITERATIONS,
                  warmup: int = WARMUP) -> list[dict]:
    """Profile ``block(x)`` (no autograd) and return one row per operator or kernel name, per pass."""

    def forward():
        return block(x)

    return profile(forward, device=x.device.type, iterations=iterations, warmup=warmup)


def profile(fn: Callable[[], object], *, device: str = "cuda", iterations: int = ITERATIONS,
            warmup: int = WARMUP) -> list[dict]:
    """Profile ``iterations`` calls of ``fn()`` after ``warmup`` calls; rows per call (see the module doc)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    cuda = device == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with torch.inference_mode():
        for _ in range(warmup):
            fn()
        if cuda:
            torch.cuda.synchronize()
        with torch_profile(activities=activities) as prof:
            for _ in range(iterations):
                fn()
            if cuda:
                torch.cuda.synchronize()  # the last kernels must finish inside the window
    events = list(prof.events())
    rows = device_rows(events) if cuda else cpu_rows(events)
    return per_pass(rows, iterations)


def _is_cpu(event) -> bool:
    return event.device_type == torch.autograd.DeviceType.CPU


def _skipped(event) -> bool:
    """Annotations (record_function, ProfilerStep#) and async events are not operators."""
    return (bool(getattr(event, "is_user_annotation", False)) or bool(getattr(event, "is_async", False))
            or event.name.startswith("ProfilerStep"))


def device_rows(events: Iterable) -> list[dict]:
    """GPU kernel time per launching operator (or per kernel when no operator launched it)."""
    events = list(events)
    kernel_time: dict[str, float] = defaultdict(float)
    kernel_calls: dict[str, int] = defaultdict(int)
    for event in events:
        if _is_cpu(event) or getattr(event, "is_user_annotation", False):
            continue
        kernel_time[event.name] += event.time_range.elapsed_us()
        kernel_calls[event.name] += 1

    op_time: dict[str, float] = defaultdict(float)
    op_calls: dict[str, int] = defaultdict(int)
    claimed_time: dict[str, float] = defaultdict(float)
    claimed_calls: dict[str, int] = defaultdict(int)
    for event in events:
        kernels = list(getattr(event, "kernels", None) or [])
        if not _is_cpu(event) or _skipped(event) or not kernels:
            continue
        launched = [k for k in kernels if k.name in kernel_time] or (kernels if getattr(event, "is_legacy", False) else [])
        if not launched:
            continue
        op_calls[event.name] += 1
        for kernel in launched:
            op_time[event.name] += kernel.duration
            claimed_time[kernel.name] += kernel.duration
            claimed_calls[kernel.name] += 1

    rows = [{"name": name, "calls": op_calls[name], "device_time_us": op_time[name]} for name in op_time]
    for name, total in kernel_time.items():
        calls = kernel_calls[name] - claimed_calls.get(name, 0)
        if calls > 0:  # launched outside any operator: a Triton kernel called from Python
            rows.append({"name": name, "calls": calls, "device_time_us": max(0.0, total - claimed_time.get(name, 0.0))})
    kernels_total = sum(kernel_time.values())
    if kernels_total > 0 and abs(sum(r["device_time_us"] for r in rows) - kernels_total) > 0.01 * kernels_total:
        # A kernel charged to two operators (or other linking trouble in some torch version):
        # fall back to one row per kernel name, which cannot count anything twice.
        rows = [{"name": name, "calls": kernel_calls[name], "device_time_us": kernel_time[name]} for name in kernel_time]
    return rows


def cpu_rows(events: Iterable) -> list[dict]:
    """Self CPU time per operator (the CPU is the device when there is no GPU)."""
    time_us: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    for event in events:
        if not _is_cpu(event) or _skipped(event) or getattr(event, "is_python_function", False):
            continue
        time_us[event.name] += event.self_cpu_time_total
        calls[event.name] += 1
    return [{"name": name, "calls": calls[name], "device_time_us": time_us[name]} for name in time_us]


def per_pass(rows: list[dict], iterations: int) -> list[dict]:
    """Divide totals by the number of passes, round, drop empty rows, sort largest first."""
    out = []
    for row in rows:
        calls = row["calls"] / iterations
        time_us = round(row["device_time_us"] / iterations, 3)
        if time_us <= 0:
            continue
        out.append({"name": row["name"], "calls": int(calls) if calls == int(calls) else round(calls, 3),
                    "device_time_us": time_us})
    return sorted(out, key=lambda r: (-r["device_time_us"], r["name"]))


# --- Reading a profile (the grader's side; exercise 6 asks the learner to write their own) ---

def is_softmax(name: str, kernel_names: Iterable[str] = ()) -> bool:
    """A softmax row: its name contains "softmax" in any case, or it is one of ``kernel_names``
    (the Triton kernels a softmax function was seen launching, whatever they are called)."""
    return "softmax" in name.lower() or name in set(kernel_names)


def total_us(rows: list[dict]) -> float:
    return float(sum(row["device_time_us"] for row in rows))


def softmax_us(rows: list[dict], kernel_names: Iterable[str] = ()) -> float:
    names = set(kernel_names)
    return float(sum(row["device_time_us"] for row in rows if is_softmax(row["name"], names)))


def softmax_share(rows: list[dict], kernel_names: Iterable[str] = ()) -> float:
    """Softmax rows' device time over every row's device time."""
    total = total_us(rows)
    return softmax_us(rows, kernel_names) / total if total > 0 else 0.0


def largest(rows: list[dict]) -> dict:
    """The row with the most device time (rows may come in any order)."""
    return max(rows, key=lambda row: row["device_time_us"])
