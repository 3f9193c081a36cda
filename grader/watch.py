"""Watching one call of the learner's function: Triton launches, torch ops, allocations.

Three things happen while a `Watch` is active:

* **Launches.** `JITFunction.run` (compiled) and `InterpretedFunction.run` (interpreter) are
  wrapped, as are the autotuner and heuristics front ends, so every ``kernel[grid](...)`` is
  recorded once (an autotuner's benchmarking launches are not counted separately).
* **Torch ops.** A `TorchDispatchMode` sees every ATen op the learner's Python code runs.
  Allocating and viewing are fine; anything that computes (``x + y``, ``torch.exp``) means the
  answer did not come from the kernel, and a fill (``zeros_like``, ``fill_``) is a whole extra
  kernel launch that writes every byte once more (in the seed, a ``zeros_like`` was where a
  1.49x "speedup" really came from).
* **Allocations.** ``torch.empty``/``empty_like``/``empty_strided``/``new_empty`` return a
  poisoned view into a guarded buffer (`grader.guards`), so writes past the end and unwritten
  elements of the output can be seen.

Torch ops that Triton itself runs during a launch (the interpreter copies tensors to the host)
are not the learner's and are neither recorded nor intercepted.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from grader import guards

aten = torch.ops.aten

_ALLOCATIONS = {
    aten.empty.memory_format,
    aten.empty_like.default,
    aten.empty_strided.default,
    aten.new_empty.default,
    aten.new_empty_strided.default,
}

_FILLS = {aten.fill_.Scalar, aten.fill_.Tensor, aten.zero_.default, aten.zeros.default,
          aten.zeros_like.default, aten.full.default, aten.full_like.default,
          aten.ones.default, aten.ones_like.default, aten.new_zeros.default,
          aten.new_full.default, aten.new_ones.default}

#: Fills that make a new tensor (``torch.zeros((), ...)`` for an atomic accumulator): not poisoned (their
#: values matter), but announced to ``on_allocate`` like any allocation, so the traffic counter watches them.
_CREATING_FILLS = {aten.zeros.default, aten.zeros_like.default, aten.full.default, aten.full_like.default,
                   aten.ones.default, aten.ones_like.default, aten.new_zeros.default, aten.new_full.default,
                   aten.new_ones.default}

# Ops that only describe memory differently: no data moves.
_VIEWS = {
    aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.as_strided.default,
    aten.alias.default, aten.detach.default, aten.expand.default, aten.unsqueeze.default,
    aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.t.default, aten.transpose.int,
    aten.permute.default, aten.select.int, aten.slice.Tensor, aten.unbind.int, aten.split.Tensor,
    aten.flatten.using_ints, aten.unflatten.int, aten.view_as.default, aten.lift_fresh.default,
    aten.is_same_size.default, aten.sym_size.int, aten.sym_stride.int, aten.sym_numel.default,
    aten.sym_storage_offset.default, aten.is_contiguous.default, aten.is_contiguous.memory_format,
    aten.is_non_overlapping_and_dense.default, aten.dim.default, aten.size.int, aten.stride.int,
    aten.numel.default, aten.storage_offset.default, aten.resolve_conj.default,
    aten.resolve_neg.default,
}

#: Readable names for the ops learners most often reach for.
_FRIENDLY = {
    "aten.add.Tensor": "x + y (torch.add)", "aten.mul.Tensor": "* (torch.mul)",
    "aten.exp.default": "torch.exp", "aten._softmax.default": "torch.softmax",
    "aten.clone.default": ".clone() / .contiguous() (a full copy)",
    "aten.copy_.default": "copy_ (a full copy)", "aten._to_copy.default": ".to() / .float() (a full copy)",
    "aten.fill_.Scalar": "fill_", "aten.zero_.default": "zero_ / zeros_like",
}


def op_name(func) -> str:
    name = f"aten.{func.__name__}" if not str(func).startswith("aten.") else str(func)
    return _FRIENDLY.get(name, name)


@dataclass
class Launch:
    kernel: str
    grid: tuple[int, ...] | None
    #: Values of the launch's arguments by name (tensors as-is), for specs that inspect them.
    arguments: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class WatchResult:
    launches: list[Launch] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)  # torch ops that compute
    fills: list[str] = field(default_factory=list)  # torch fills (zeros_like, fill_)
    outputs: list[guards.GuardedTensor] = field(default_factory=list)

    def output_for(self, tensor: torch.Tensor) -> guards.GuardedTensor | None:
        """The intercepted allocation that ``tensor`` is a view of, if any."""
        if not isinstance(tensor, torch.Tensor):
            return None
        ptr = tensor.untyped_storage().data_ptr()
        for out in self.outputs:
            if out.buffer.untyped_storage().data_ptr() == ptr:
                return out
        return None


class _State:
    depth = 0  # > 0 while Triton is launching: its own torch ops are not the learner's
    active: "Watch | None" = None


def _launch_targets():
    """(owner class, attribute) pairs to wrap; looked up defensively so Triton 3.6-3.9 all work."""
    targets = []
    try:
        from triton.runtime.jit import JITFunction

        targets.append(JITFunction)
    except ImportError:
        pass
    try:
        from triton.runtime.interpreter import InterpretedFunction

        targets.append(InterpretedFunction)
    except ImportError:
        pass
    try:
        from triton.runtime import autotuner

        for name in ("Autotuner", "Heuristics"):
            if hasattr(autotuner, name):
                targets.append(getattr(autotuner, name))
    except ImportError:
        pass
    return [t for t in targets if "run" in t.__dict__]


def _kernel_name(obj) -> str:
    fn = getattr(obj, "fn", None)
    while fn is not None and not inspect.isfunction(fn) and hasattr(fn, "fn"):
        fn = fn.fn
    return getattr(fn, "__name__", None) or getattr(obj, "__name__", type(obj).__name__)


def _resolve_grid(obj, grid, args, kwargs) -> tuple[int, ...] | None:
    if isinstance(grid, (tuple, list)):
        return tuple(int(g) for g in grid)
    if isinstance(grid, int):
        return (grid,)
    if callable(grid):
        try:
            fn = obj
            while hasattr(fn, "fn") and not inspect.isfunction(fn):
                fn = fn.fn
            bound = _bind(fn, args, kwargs)
            resolved = grid(dict(bound))
            return tuple(int(g) for g in resolved)
        except Exception:
            return None
    return None


def _bound_arguments(obj, args, kwargs) -> dict[str, Any]:
    try:
        fn = obj
        while hasattr(fn, "fn") and not inspect.isfunction(fn):
            fn = fn.fn
        return _bind(fn, args, kwargs)
    except Exception:
        return {}


def _bind(fn, args, kwargs) -> dict[str, Any]:
    """The kernel's own parameters by name; launch options (num_warps, num_stages) are left out."""
    sig = inspect.signature(fn)
    named = {k: v for k, v in kwargs.items() if k in sig.parameters}
    return dict(sig.bind_partial(*args, **named).arguments)


class _Recorder(TorchDispatchMode):
    def __init__(self, watch: "Watch"):
        super().__init__()
        self.watch = watch

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if _State.depth > 0:
            return result
        packet = func.overloadpacket
        if func in _ALLOCATIONS and isinstance(result, torch.Tensor):
            return self.watch.poisoned_like(result)
        if func in _VIEWS or packet in {aten.view, aten.as_strided, aten.slice, aten.select}:
            return result
        if func in _FILLS or packet in {aten.fill_, aten.zero_, aten.zeros_like, aten.full}:
            self.watch.result.fills.append(op_name(func))
            if func in _CREATING_FILLS and isinstance(result, torch.Tensor):
                self.watch.created(result)
        else:
            self.watch.result.computed.append(op_name(func))
        return result


class Watch:
    """Context manager: ``with Watch(device) as w: fn(...)``; then read ``w.result``."""

    def __init__(self, *, intercept_allocations: bool = True, on_allocate=None):
        self.intercept_allocations = intercept_allocations
        #: Called as on_allocate(name, tensor) for each intercepted allocation (the traffic counter
        #: registers outputs this way, before the kernel that writes them runs).
        self.on_allocate = on_allocate
        self.result = WatchResult()
        self._originals: list[tuple[type, Any]] = []
        self._mode: _Recorder | None = None
        self._counter = 0

    def poisoned_like(self, fresh: torch.Tensor) -> torch.Tensor:
        if not self.intercept_allocations or fresh.numel() == 0:
            return fresh
        self._counter += 1
        name = "out" if self._counter == 1 else f"allocation #{self._counter}"
        guarded = guards.guard_output(name, fresh.shape, fresh.stride(), fresh.dtype, fresh.device)
        self.result.outputs.append(guarded)
        if self.on_allocate is not None:
            self.on_allocate(name, guarded.view)
        return guarded.view

    def created(self, tensor: torch.Tensor) -> None:
        """A tensor made by a fill: named and announced to ``on_allocate`` like an allocation."""
        if not self.intercept_allocations or tensor.numel() == 0:
            return
        self._counter += 1
        if self.on_allocate is not None:
            self.on_allocate("out" if self._counter == 1 else f"allocation #{self._counter}", tensor)

    def _wrap(self, owner: type) -> None:
        original = owner.__dict__["run"]
        watch = self

        def run(obj, *args, grid, warmup, **kwargs):
            if warmup or _State.depth > 0:
                _State.depth += 1
                try:
                    return original(obj, *args, grid=grid, warmup=warmup, **kwargs)
                finally:
                    _State.depth -= 1
            watch.result.launches.append(
                Launch(_kernel_name(obj), _resolve_grid(obj, grid, args, kwargs), _bound_arguments(obj, args, kwargs))
            )
            _State.depth += 1
            try:
                return original(obj, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                _State.depth -= 1

        self._originals.append((owner, original))
        setattr(owner, "run", run)

    def __enter__(self) -> "Watch":
        if _State.active is not None:
            raise RuntimeError("a Watch is already active")
        _State.active = self
        for owner in _launch_targets():
            self._wrap(owner)
        self._mode = _Recorder(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self._mode is not None:
                self._mode.__exit__(*exc)
        finally:
            for owner, original in reversed(self._originals):
                setattr(owner, "run", original)
            self._originals.clear()
            _State.active = None
            _State.depth = 0


def count_launches(fn, *args, **kwargs) -> tuple[Any, list[Launch]]:
    """Run ``fn`` and return its result with the Triton launches it made (no interception)."""
    with Watch(intercept_allocations=False) as watch:
        value = fn(*args, **kwargs)
    return value, watch.result.launches
