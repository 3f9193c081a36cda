"""Watching one call of the learner's function: Triton launches, torch ops, allocations.

Three things happen while a `Watch` is active:

* **Launches.** `JITFunction.run` (compiled) and `InterpretedFunction.run` (interpreter) are
  wrapped, as are the autotuner and heuristics front ends, so every ``kernel[grid](...)`` is
  recorded once (an autotuner's benchmarking launches are not counted separately).
* **Torch ops.** A `TorchDispatchMode` sees every ATen op the learner's Python code runs.
  Allocating and viewing are fine; anything that computes (``x + y``, ``torch.exp``) means the
  answer did not come from the kernel, and a fill (``zeros_like``, ``fill_``) is a whole extra
  kernel launch that writes every byte once more (a ``zeros_like`` before
  the kernel can be all that separates a "fast" kernel from a slow one).
* **Allocations.** ``torch.empty``/``empty_like``/``empty_strided``/``new_empty`` return a
  poisoned view into a guarded buffer (`grader.wire.guards`), so writes past the end and unwritten
  elements of the output can be seen.

Torch ops that Triton itself runs during a launch (the interpreter copies tensors to the host)
are not the learner's and are neither recorded nor intercepted.

The launch wrappers are installed when a watch starts and removed when it ends, except in the
learner's process in the interpreter: there they are installed once, before the learner's file is
imported (`install_for_process`), and stay, so every call of the learner's function finds the same
wrappers whatever the judge does with its answer (between calls they pass launches through). On a
GPU they still come and go with each watch: the judge's timed calls run with none.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from grader.wire import guards

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

#: How a dtype cast after the kernel reads in a call's ``computed`` ops (`grader.judge.checks` names the
#: returned dtype instead when it is the only op).
CAST = ".to() / .float() (a full copy)"
#: Readable names for the ops learners most often reach for.
_FRIENDLY = {
    "aten.add.Tensor": "x + y (torch.add)", "aten.mul.Tensor": "* (torch.mul)",
    "aten.exp.default": "torch.exp", "aten._softmax.default": "torch.softmax",
    "aten.clone.default": ".clone() / .contiguous() (a full copy)",
    "aten.copy_.default": "copy_ (a full copy)", "aten._to_copy.default": CAST,
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
    #: ``{"n_regs", "shared_bytes", "num_warps"}`` of the compiled kernel (GPU only; None in the interpreter).
    compiled: dict | None = None

    @property
    def programs(self) -> int | None:
        """Programs launched: the product of the grid's dimensions."""
        if self.grid is None:
            return None
        total = 1
        for g in self.grid:
            total *= g
        return total


@dataclass
class WatchResult:
    launches: list[Launch] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)  # torch ops that compute
    fills: list[str] = field(default_factory=list)  # torch fills (zeros_like, fill_)
    #: The storage each fill wrote (``fills[i]`` wrote ``fill_storages[i]``), for `filled_outputs`.
    fill_storages: list[int | None] = field(default_factory=list)
    outputs: list[guards.GuardedTensor] = field(default_factory=list)

    def filled_outputs(self, result: Any) -> list[tuple[int, str]]:
        """(position among the returned tensors, fill) for each fill that wrote a tensor the call
        returned. Only returned outputs must be written by a kernel: a scratch buffer the function
        does not return may be made with any torch factory, zeros included."""
        returned = [result] if isinstance(result, torch.Tensor) else \
            [item for item in result if isinstance(item, torch.Tensor)] if isinstance(result, (tuple, list)) else []
        where = {_storage(tensor): index for index, tensor in reversed(list(enumerate(returned)))}
        return [(where[ptr], fill) for fill, ptr in zip(self.fills, self.fill_storages)
                if ptr is not None and ptr in where]

    def output_for(self, tensor: torch.Tensor) -> guards.GuardedTensor | None:
        """The intercepted allocation that ``tensor`` is a view of, if any."""
        if not isinstance(tensor, torch.Tensor):
            return None
        ptr = tensor.untyped_storage().data_ptr()
        for out in self.outputs:
            if out.buffer.untyped_storage().data_ptr() == ptr:
                return out
        return None


def _storage(tensor: Any) -> int | None:
    """Where a tensor's memory starts: views of one allocation share it."""
    if not isinstance(tensor, torch.Tensor):
        return None
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


class _State:
    depth = 0  # > 0 while Triton is launching: its own torch ops are not the learner's
    active: "Watch | None" = None
    permanent = False  # the launch wrappers stay installed between watches (`install_for_process`)


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


def _evaluate_grid(obj, grid, args, kwargs) -> tuple[int, ...]:
    """``grid(meta)`` with the kernel's bound arguments, defaults and launch options, as Triton calls it."""
    fn = obj
    while hasattr(fn, "fn") and not inspect.isfunction(fn):
        fn = fn.fn
    meta = dict(kwargs)
    try:
        signature = inspect.signature(fn)
        named = {k: v for k, v in kwargs.items() if k in signature.parameters}
        bound = signature.bind_partial(*args, **named)
        bound.apply_defaults()
        meta.update(bound.arguments)
    except (TypeError, ValueError):
        pass
    resolved = grid(meta)
    if isinstance(resolved, int):
        return (resolved,)
    return tuple(resolved)


def _in_learner_context(fn):
    """``fn`` as a learner callback: the torch ops it makes are the learner's, even in a launch."""
    if fn is None or getattr(fn, "_grade_learner_context", False):
        return fn

    def call(*args, **kwargs):
        depth, _State.depth = _State.depth, 0
        try:
            return fn(*args, **kwargs)
        finally:
            _State.depth = depth

    call._grade_learner_context = True
    return call


def _learner_callbacks(obj) -> "Callable[[], None]":
    """Run the learner's own callbacks of a launch in the learner's context, until the returned
    function is called. Triton calls them inside the launch, where its own torch ops are (rightly)
    not recorded: a `triton.heuristics` value, an autotuner's user `pre_hook`/`post_hook`,
    `prune_configs_by` functions and a config's `pre_hook`, a kernel's `pre_run_hooks`, and the
    launch hooks of `triton.knobs`. Work hidden there would otherwise go unseen."""
    undo: list = []

    def swap(owner, name, wrap):
        old = getattr(owner, name, None)
        if old is None:
            return
        new = wrap(old)
        if new is not old:
            setattr(owner, name, new)
            undo.append((owner, name, old))

    values = getattr(obj, "values", None)
    if isinstance(values, dict):  # triton.heuristics
        swap(obj, "values", lambda d: {k: _in_learner_context(v) for k, v in d.items()})
    if isinstance(getattr(obj, "configs", None), list):  # triton.autotune
        for config in obj.configs:
            swap(config, "pre_hook", _in_learner_context)
        if getattr(obj, "user_defined_pre_hook", False):
            swap(obj, "pre_hook", _in_learner_context)
        if getattr(obj, "user_defined_post_hook", False):
            swap(obj, "post_hook", _in_learner_context)
        for name in ("early_config_prune", "perf_model"):
            swap(obj, name, _in_learner_context)
    hooks = getattr(obj, "pre_run_hooks", None)
    if isinstance(hooks, list) and hooks:  # a JITFunction's pre-run hooks
        swap(obj, "pre_run_hooks", lambda items: [_in_learner_context(h) for h in items])
    try:
        from triton import knobs

        runtime = knobs.runtime
        for name in ("launch_enter_hook", "launch_exit_hook"):
            swap(runtime, name, _in_learner_context)
    except Exception:  # a Triton without knobs, or with other names
        pass

    def restore() -> None:
        for owner, name, old in reversed(undo):
            try:
                setattr(owner, name, old)
            except Exception:
                pass

    return restore


def compiled_resources(compiled: Any) -> dict | None:
    """``{"n_regs", "shared_bytes", "num_warps"}`` of what a GPU launch returned (a CompiledKernel,
    Triton 3.6 to 3.9), or None (the interpreter compiles nothing).

    ``n_regs`` is filled in when the binary is loaded (``_init_handles``), which a launch has done.
    """
    if compiled is None or not hasattr(compiled, "metadata"):
        return None
    try:
        init = getattr(compiled, "_init_handles", None)
        if callable(init):
            init()
        metadata = compiled.metadata
        shared = metadata["shared"] if isinstance(metadata, dict) else metadata.shared
        warps = metadata["num_warps"] if isinstance(metadata, dict) else metadata.num_warps
        return {"n_regs": int(compiled.n_regs), "shared_bytes": int(shared), "num_warps": int(warps)}
    except Exception:  # a Triton that spells these differently: the caller says it could not check
        return None


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
            self.watch.result.fill_storages.append(_storage(result if func in _CREATING_FILLS else
                                                            (args[0] if args else None)))
            if func in _CREATING_FILLS and isinstance(result, torch.Tensor):
                self.watch.created(result)
        else:
            self.watch.result.computed.append(op_name(func))
        return result


# torch wraps a dispatch mode's __torch_dispatch__ so that the first call imports torch._dynamo (about 4 s
# of CPU, in every learner process) to keep torch.compile from tracing the mode. Nothing here is
# compiled: point the wrapper at the function itself, as if dynamo had already been asked.
_raw_dispatch = getattr(_Recorder.__torch_dispatch__, "__wrapped__", None)
if _raw_dispatch is not None:
    setattr(_raw_dispatch, "__dynamo_disable", _raw_dispatch)


class Watch:
    """Context manager: ``with Watch(device) as w: fn(...)``; then read ``w.result``."""

    def __init__(self, *, intercept_allocations: bool = True, on_allocate=None, make_output=None):
        self.intercept_allocations = intercept_allocations
        #: Called as on_allocate(name, tensor) for each intercepted allocation (the traffic counter
        #: registers outputs this way, before the kernel that writes them runs).
        self.on_allocate = on_allocate
        #: ``make_output(name, shape, stride, dtype, device) -> GuardedTensor``: where intercepted
        #: allocations live (the learner's process puts them in memory the judge can read).
        self.make_output = make_output or guards.guard_output
        self.result = WatchResult()
        self._mode: _Recorder | None = None
        self._counter = 0

    def poisoned_like(self, fresh: torch.Tensor) -> torch.Tensor:
        if not self.intercept_allocations or fresh.numel() == 0:
            return fresh
        self._counter += 1
        name = "out" if self._counter == 1 else f"allocation #{self._counter}"
        guarded = self.make_output(name, fresh.shape, fresh.stride(), fresh.dtype, fresh.device)
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

    def __enter__(self) -> "Watch":
        if _State.active is not None:
            raise RuntimeError("a Watch is already active")
        _install_launch_wrappers()
        _State.active = self
        self._mode = _Recorder(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self._mode is not None:
                self._mode.__exit__(*exc)
        finally:
            _State.active = None
            _State.depth = 0
            if not _State.permanent:
                _uninstall_launch_wrappers()


#: (owner class, its own ``run``) of every launch front end wrapped now.
_WRAPPED: list[tuple[type, Any]] = []


def _launch_wrapper(owner: type, original):
    owner_is_jit = owner.__name__ in ("JITFunction", "InterpretedFunction")

    @functools.wraps(original)
    def run(obj, *args, grid, warmup, **kwargs):
        watch = _State.active
        if watch is None:  # no call of the learner's function is watched now (a launch at import)
            return original(obj, *args, grid=grid, warmup=warmup, **kwargs)
        if callable(grid) and not warmup and owner_is_jit:
            # Evaluate the grid here, where the learner's torch ops are watched: Triton calls a
            # grid function during the launch, where its own ops are (rightly) not recorded, so
            # work hidden in a grid lambda would otherwise go unseen.
            depth, _State.depth = _State.depth, 0
            try:
                grid = _evaluate_grid(obj, grid, args, kwargs)
            finally:
                _State.depth = depth
        if warmup or _State.depth > 0:
            _State.depth += 1
            try:
                return original(obj, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                _State.depth -= 1
        launch = Launch(_kernel_name(obj), _resolve_grid(obj, grid, args, kwargs), _bound_arguments(obj, args, kwargs))
        watch.result.launches.append(launch)
        _State.depth += 1
        restore = _learner_callbacks(obj)
        try:
            value = original(obj, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            restore()
            _State.depth -= 1
        launch.compiled = compiled_resources(value)
        return value

    return run


def _install_launch_wrappers() -> None:
    if _WRAPPED:
        return
    for owner in _launch_targets():
        original = owner.__dict__["run"]
        _WRAPPED.append((owner, original))
        setattr(owner, "run", _launch_wrapper(owner, original))


def _uninstall_launch_wrappers() -> None:
    while _WRAPPED:
        owner, original = _WRAPPED.pop()
        setattr(owner, "run", original)


def install_for_process() -> None:
    """Wrap Triton's launch front ends for the rest of this process (the learner's process calls it
    in the interpreter, before importing the learner's file): every call then finds the same
    wrappers in place, so their presence tells no call from another."""
    _install_launch_wrappers()
    _State.permanent = True


def count_launches(fn, *args, **kwargs) -> tuple[Any, list[Launch]]:
    """Run ``fn`` and return its result with the Triton launches it made (no interception)."""
    with Watch(intercept_allocations=False) as watch:
        value = fn(*args, **kwargs)
    return value, watch.result.launches


@contextlib.contextmanager
def redirect_allocations(slot: torch.Tensor) -> Iterator[None]:
    """While the judge times calls (`grader.judge.clock`): the first ``torch.empty_like`` /
    ``torch.empty`` / ``new_empty`` of ``slot``'s shape and dtype on its device returns ``slot``,
    memory the judge owns and checks. Python-level wrappers, not a dispatch mode: they cost about a
    microsecond, where a dispatch mode would add tens to every call being timed."""
    taken = [False]

    def wants(shape, dtype, device) -> bool:
        if taken[0]:
            return False
        try:
            same = (tuple(int(s) for s in shape) == tuple(slot.shape) and (dtype is None or dtype == slot.dtype)
                    and (device is None or torch.device(device).type == slot.device.type))
        except (TypeError, ValueError):
            return False
        if same:
            taken[0] = True
        return same

    originals = {"empty_like": torch.empty_like, "empty": torch.empty}
    original_new_empty = torch.Tensor.new_empty

    def empty_like(t, *args, **kwargs):
        if not args and kwargs.get("memory_format") in (None, torch.preserve_format, torch.contiguous_format) \
                and t.is_contiguous() and wants(t.shape, kwargs.get("dtype", t.dtype), kwargs.get("device", t.device)):
            return slot
        return originals["empty_like"](t, *args, **kwargs)

    def empty(*size, **kwargs):
        shape = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size
        if kwargs.get("memory_format") in (None, torch.contiguous_format) and "out" not in kwargs \
                and wants(shape, kwargs.get("dtype") or torch.get_default_dtype(), kwargs.get("device")):
            return slot
        return originals["empty"](*size, **kwargs)

    def new_empty(self, size, *args, **kwargs):
        if not args and wants(size, kwargs.get("dtype", self.dtype), kwargs.get("device", self.device)):
            return slot
        return original_new_empty(self, size, *args, **kwargs)

    torch.empty_like, torch.empty, torch.Tensor.new_empty = empty_like, empty, new_empty
    try:
        yield
    finally:
        torch.empty_like, torch.empty = originals["empty_like"], originals["empty"]
        torch.Tensor.new_empty = original_new_empty
