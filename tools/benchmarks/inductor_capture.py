"""What ``torch.compile`` made of a function, and what one call of it costs on the host and the GPU.

The softmax benchmark (`tools.benchmarks.ex03_softmax`) uses these to show *why* a compiled softmax
moves with the way it was compiled, rather than only *that* it moves:

* `fresh_function` — a new Python function (its own code object) with the body of another. Dynamo
  keys its compiled code, its recompile count and its memory of which sizes changed ("automatic
  dynamic") on the code object, so two ``torch.compile`` wrappers of one function share all three
  and one can change what the other compiles. Each way of compiling gets a function of its own.
* `GeneratedCode` — the Python modules Inductor loaded during a call (the wrapper whose ``call``
  launches the kernels, and the Triton kernels), read from Inductor's ``PyCodeCache``.
* `triton_kernels(source)` — the Triton kernels in a generated module: name and source;
  `call_function` and `launch_order` — the wrapper's ``call`` and the kernels it launches, in order.
* `reduction_blocks(kernel_source)` — what the source says about a reduction kernel: persistent
  (the whole row in one block of ``R0_BLOCK`` lanes, fixed in the source) or looped (a loop over
  the row in blocks of ``R0_BLOCK``, chosen by the autotuner), how many loops walk the row, whether
  it uses Inductor's online softmax, and whether the sizes are constants or symbols.
* `autotuned_configs(module)` — the configuration each kernel's autotuner kept (XBLOCK, R0_BLOCK,
  num_warps, num_stages) and how many it chose among.
* `launches_per_call(fn)` — the GPU kernels one call launches, with their grids, blocks, registers
  and durations, from a ``torch.profiler`` trace (`kernels_from_trace` parses it).
* `host_us_per_call(fn)` — CPU time per call (the work Dynamo's guards, the wrapper and the
  launcher do before the GPU sees anything).
* `CpuClock` — how busy the machine's CPUs were over an interval (/proc/stat), and the processes
  this one has started (Inductor's compile workers), to tell a measurement taken while the host was
  busy from one taken on a quiet host.

Names in the generated code follow Inductor's conventions (``triton_per_*``: persistent reduction,
``triton_red_*``: looped reduction, ``triton_poi_*``: pointwise); older releases spell the
reduction block ``RBLOCK`` and its loop ``roffset``, newer ones ``R0_BLOCK`` and ``r0_offset``.
Everything here reads and never changes what Inductor does.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import textwrap
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


def fresh_function(fn: Callable, name: str) -> Callable:
    """A copy of ``fn`` with its own code object (named ``name``): its own Dynamo cache entries."""
    code = fn.__code__.replace(co_name=name, co_qualname=name) if hasattr(fn.__code__, "co_qualname") \
        else fn.__code__.replace(co_name=name)
    copy = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__doc__ = fn.__doc__
    return copy


# --- the code Inductor generated -------------------------------------------------------------------

def _loaded_modules() -> list:
    try:
        from torch._inductor.codecache import PyCodeCache
    except ImportError:
        return []
    modules = getattr(PyCodeCache, "modules", None)
    if isinstance(modules, list):
        return list(modules)
    if isinstance(modules, dict):
        return list(modules.values())
    cache = getattr(PyCodeCache, "modules_no_attr", None) or getattr(PyCodeCache, "cache", None)
    return list(cache.values()) if isinstance(cache, dict) else []


@dataclass
class GeneratedCode:
    """Modules Inductor loaded between `start` and `stop` (a call that compiled, or nothing)."""

    modules: list = field(default_factory=list)
    _before: set = field(default_factory=set, repr=False)

    @classmethod
    def start(cls) -> "GeneratedCode":
        return cls(_before={id(m) for m in _loaded_modules()})

    def stop(self) -> "GeneratedCode":
        self.modules = [m for m in _loaded_modules() if id(m) not in self._before]
        return self

    @staticmethod
    def source(module) -> str:
        path = getattr(module, "__file__", None)
        try:
            return Path(path).read_text() if path else ""
        except OSError:
            return ""

    def wrappers(self) -> list:
        """The generated modules whose ``call`` launches kernels (one per compiled graph)."""
        return [m for m in self.modules if callable(getattr(m, "call", None))]

    def kernels(self) -> dict[str, str]:
        """Every Triton kernel among the new modules: name -> source (from kernel modules or wrappers)."""
        found: dict[str, str] = {}
        for module in self.modules:
            found.update(triton_kernels(self.source(module)))
        return found


_EMBEDDED = re.compile(r"async_compile\.triton\(\s*'(\w+)'\s*,\s*'''(.*?)'''", re.S)
_JIT_DEF = re.compile(r"@triton\.jit\s*\ndef\s+(\w+)\s*\(")


def triton_kernels(source: str) -> dict[str, str]:
    """``{name: source}`` of the Triton kernels in a generated module: the strings a wrapper embeds in
    ``async_compile.triton('name', '''...''')``, or the module itself when it is one kernel."""
    kernels = {name: body.strip() + "\n" for name, body in _EMBEDDED.findall(source)}
    if not kernels:
        match = _JIT_DEF.search(source)
        if match:
            kernels[match.group(1)] = source
    return kernels


def call_function(source: str) -> str:
    """The ``call`` of a wrapper module, the launches of one call in order (a module-level
    ``def call(args)`` in older releases, a method ``Runner.call(self, args)`` in newer ones)."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^(\s*)def call\(", line)
        if not match:
            continue
        indent = len(match.group(1))
        body = [line]
        for following in lines[i + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following)
        return textwrap.dedent("\n".join(body)).rstrip() + "\n"
    return ""


def launch_order(call_source: str) -> list[str]:
    """Names of the kernels a wrapper's ``call`` launches, in order (``name.run(...)``)."""
    return re.findall(r"^\s*(\w+)\.run\(", call_source, re.M)


def reduction_blocks(source: str) -> dict:
    """What a generated Triton kernel's source says about its reduction (see the module docstring).

    ``r_block`` is the reduction block when the source fixes it (a persistent reduction), else None
    and ``r_block_autotuned`` is True (a looped reduction: `autotuned_configs` has the value).
    ``loops_over_row`` counts the loops that walk the reduction dimension: a looped online softmax
    has two (max and sum together, then the output), a looped classic softmax three.
    """
    kind = ("persistent" if re.search(r"persistent_reduction\s*\(", source)
            else "looped" if re.search(r"\breduction\s*\(", source)
            else "pointwise" if re.search(r"\bpointwise\s*\(", source) else "unknown")
    fixed = re.search(r"\bR0?_?BLOCK\s*:\s*tl\.constexpr\s*=\s*(\d+)", source)
    signature = re.search(r"def\s+\w+\s*\((.*?)\)\s*:", source, re.S)
    autotuned = bool(signature and re.search(r"\bR0?_?BLOCK\s*:\s*tl\.constexpr", signature.group(1)))
    hints = re.search(r"size_hints\s*=\s*(\{[^}]*\}|\[[^\]]*\])", source)
    hint = re.search(r"reduction_hint\s*=\s*ReductionHint\.(\w+)", source)
    xnumel = re.search(r"^\s*xnumel\s*=\s*(\d+)\s*$", source, re.M)
    rnumel = re.search(r"^\s*r0?_?numel\s*=\s*(\d+)\s*$", source, re.M)
    return {
        "kind": kind,
        "r_block": int(fixed.group(1)) if fixed else None,
        "r_block_autotuned": autotuned and not fixed,
        "loops_over_row": len(re.findall(r"for\s+r0?_?offset\s+in\s+", source)),
        "online_softmax": "online_softmax" in source,
        "size_hints": hints.group(1) if hints else None,
        "reduction_hint": hint.group(1) if hint else None,
        "static_xnumel": int(xnumel.group(1)) if xnumel else None,
        "static_rnumel": int(rnumel.group(1)) if rnumel else None,
        "loads": source.count("tl.load("),
        "stores": source.count("tl.store("),
    }


def autotuned_configs(modules: list) -> dict[str, dict]:
    """``{kernel name: {"kwargs", "num_warps", "num_stages", "candidates"}}`` for every autotuned
    kernel object in the given generated modules (after a call, the autotuner has kept one)."""
    found: dict[str, dict] = {}
    for module in modules:
        for name, obj in list(vars(module).items()):
            launchers = getattr(obj, "launchers", None)
            if not isinstance(launchers, list) or not launchers:
                continue
            config = getattr(launchers[0], "config", None)
            if config is None:
                continue
            found[name] = {
                "kwargs": {k: v for k, v in dict(getattr(config, "kwargs", {}) or {}).items()
                           if isinstance(v, (int, float, str, bool))},
                "num_warps": getattr(config, "num_warps", None),
                "num_stages": getattr(config, "num_stages", None),
                "candidates": len(getattr(obj, "configs", None) or []) or None,
                "launchers_kept": len(launchers),
            }
    return found


# --- what one call costs ---------------------------------------------------------------------------

def kernels_from_trace(trace: dict) -> list[dict]:
    """GPU kernel events of a Chrome trace (``torch.profiler``'s export), in time order."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    kernels = []
    for event in events:
        if event.get("ph") != "X" or str(event.get("cat", "")).lower() != "kernel":
            continue
        args = event.get("args", {}) or {}
        kernels.append({
            "name": event.get("name", "?"),
            "ts": event.get("ts", 0),
            "us": round(float(event.get("dur", 0.0)), 2),
            "grid": args.get("grid"),
            "block": args.get("block"),
            "registers": args.get("registers per thread"),
            "shared_bytes": args.get("shared memory"),
        })
    kernels.sort(key=lambda k: k["ts"])
    for k in kernels:
        del k["ts"]
    return kernels


def launches_per_call(fn: Callable[[], Any], *, calls: int = 3) -> dict:
    """Profile ``calls`` calls of ``fn`` (already warm): kernels per call and those of the last call."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            kernels = kernels_from_trace(json.load(f))
    per_call = len(kernels) / calls
    last = kernels[-int(per_call):] if per_call >= 1 and per_call == int(per_call) else kernels
    return {"kernels_per_call": per_call, "gpu_us_per_call": round(sum(k["us"] for k in kernels) / calls, 2),
            "launches": last}


def host_us_per_call(fn: Callable[[], Any], *, calls: int = 20) -> float:
    """Microseconds of CPU per call of ``fn``: ``calls`` calls back to back, no synchronization between."""
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return round(elapsed / calls * 1e6, 1)


# --- how busy the host is ----------------------------------------------------------------------------

def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs from /proc/stat, or None where there is no /proc."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def descendants() -> list[int]:
    """Process ids started by this process, directly or not (Inductor's compile workers among them)."""
    parents: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [os.getpid()]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found


class CpuClock:
    """``clock = CpuClock(); ...; clock.busy()``: the fraction of all CPUs' time spent busy since."""

    def __init__(self) -> None:
        self.start = _cpu_times()
        self.wall = time.perf_counter()

    def busy(self) -> float | None:
        end = _cpu_times()
        if self.start is None or end is None or end[1] == self.start[1]:
            return None
        return round((end[0] - self.start[0]) / (end[1] - self.start[1]), 3)

    def snapshot(self) -> dict:
        return {"cpu_busy": self.busy(), "seconds": round(time.perf_counter() - self.wall, 2),
                "cpus": os.cpu_count(), "child_processes": len(descendants()),
                "load_average": [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None}


def wait_until_quiet(*, below: float = 0.15, max_s: float = 20.0, step_s: float = 0.5) -> dict:
    """Sleep until the machine's CPUs are less than ``below`` busy over ``step_s`` (at most ``max_s``).

    Inductor compiles kernels in worker processes; a measurement taken while they are still busy
    (starting up, or compiling) can be bound by the host rather than the GPU.
    """
    waited = 0.0
    busy = None
    while waited < max_s:
        clock = CpuClock()
        time.sleep(step_s)
        waited += step_s
        busy = clock.busy()
        if busy is None or busy < below:
            break
    return {"waited_s": round(waited, 1), "cpu_busy": busy}
