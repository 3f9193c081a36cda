"""Watch every memory access of Triton's interpreter: the hook layer under `grader.learner.traffic`
(bytes per tensor) and `grader.learner.access_map` (which elements each program touched).

Under ``TRITON_INTERPRET=1`` every ``tl.load`` and ``tl.store`` runs in Python, so we can
watch them.  A *listener* is any object with these four methods::

    _begin_launch(kernel, arguments)           # one kernel launch starts
    _set_host_arguments(arguments, host_shift)  # its arguments' host copies (see below)
    _set_grid(grid)                             # its padded (x, y, z) grid
    _on_access(access)                          # one load or store: an `Access`

``with listening(listener, interpreter): ...`` installs the hooks for the first listener and
removes them when the last one leaves, also when the block raises.  Several listeners may be
active at once (nested ``count_traffic()`` blocks, or a counter and a recorder): each sees
every event.

How it hooks the interpreter
----------------------------
Every memory access of ``triton/runtime/interpreter.py`` - plain and masked
loads and stores, block-pointer loads and stores (Triton <= 3.6), tensor
descriptor loads/stores/gathers/scatters, ``tl.atomic_*`` - ends in one of four
functions of the C++ extension that the module imports as ``_interpreter``:
``load(ptrs, masks, other, dtype)``, ``store(ptrs, values, masks)``,
``atomic_rmw(op, ptrs, values, masks, sem)`` and
``atomic_cas(ptrs, cmp, values, sem)``.  That is the narrowest point there is:
it sees the final byte addresses and the final mask of every lane, whatever the
front end did to produce them, and its signatures have not changed since
Triton 2.2 (while the Python builder methods around it change their signatures
between releases).  While a listener is active the module global
``triton.runtime.interpreter._interpreter`` is replaced by a thin proxy whose
four memory functions call the originals and then report an `Access`;
everything else is delegated unchanged.  Three more hooks give each launch its context:

* ``GridExecutor.__call__`` - one call per kernel launch: the launch count and
  the kernel's name;
* ``interpreter_builder.set_grid_dim`` - called once per launch with the padded
  ``(x, y, z)`` grid (so callable grids need not be re-evaluated);
* ``GridExecutor._init_args_hst`` (optional) - the host copies of the
  arguments: their names give the per-argument tally, and where a device
  tensor was copied to a different host address (GPU tensors under the
  interpreter) the watched ranges are translated to the host copy.

The program an access belongs to is read, not hooked: the interpreter runs the programs of a
launch one after the other and keeps the running one's index in
``interpreter_builder.grid_idx`` (the attribute ``tl.program_id`` reads).

All hook points are looked up with ``getattr``; if the required ones
(``_interpreter.load/store``, ``GridExecutor.__call__``, and builder methods
that really go through ``_interpreter``) are missing, or the interpreter is
off, `hook_points` says why and nothing is patched.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

__all__ = ["Access", "RangeTable", "argument_tensors", "hook_points", "listening", "storage_base", "tensor_range"]

_MISSING = object()


# --------------------------------------------------------------------------- byte ranges


def tensor_range(tensor) -> Tuple[int, int, int]:
    """(start address, extent in bytes, element bytes) of a tensor view.

    The extent covers every byte from the first to the last element the view's
    strides can reach, so a strided view includes the gaps between its rows;
    the element bytes (numel * element size) are what "one pass" means.
    """
    if not hasattr(tensor, "untyped_storage") and hasattr(tensor, "base"):
        tensor = tensor.base  # triton's TensorWrapper (tl.reinterpret) wraps a torch tensor
    start = int(tensor.data_ptr())
    item = int(tensor.element_size())
    numel = int(tensor.numel())
    if numel == 0:
        return start, 0, 0
    last = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return start, (int(last) + 1) * item, numel * item


def storage_base(tensor) -> Optional[int]:
    """Address of the storage a tensor lives in (the key for device->host translation)."""
    if not hasattr(tensor, "untyped_storage") and hasattr(tensor, "base"):
        tensor = tensor.base
    try:
        return int(tensor.untyped_storage().data_ptr())
    except Exception:
        return None


class RangeTable:
    """Maps byte addresses to owner indices with one ``np.searchsorted``.

    Overlapping ranges are flattened into elementary segments first, each owned
    by the smallest range that covers it (ties: the earliest), so a lookup is a
    single binary search whatever the overlaps.  Owner -1 means "none".
    """

    def __init__(self, ranges: List[Tuple[int, int]]):
        self.size = len(ranges)
        edges = sorted({edge for start, extent in ranges if extent > 0 for edge in (start, start + extent)})
        self.edges = np.array(edges, dtype=np.uint64)
        owners = [-1] * (len(edges) + 1)
        for segment in range(1, len(edges)):
            low = edges[segment - 1]
            best = None
            for index, (start, extent) in enumerate(ranges):
                if extent > 0 and start <= low < start + extent and (best is None or extent < ranges[best][1]):
                    best = index
            owners[segment] = -1 if best is None else best
        self.owners = np.array(owners, dtype=np.int64)

    def owner(self, addresses: np.ndarray) -> np.ndarray:
        """The owner index of every address (-1: none)."""
        if self.edges.size == 0 or addresses.size == 0:
            return np.full(addresses.shape, -1, dtype=np.int64)
        return self.owners[np.searchsorted(self.edges, addresses, side="right")]

    def count(self, addresses: np.ndarray) -> np.ndarray:
        """Lanes per owner: index 0 is "no owner", index i + 1 is range i."""
        if self.edges.size == 0 or addresses.size == 0:
            counts = np.zeros(self.size + 1, dtype=np.int64)
            counts[0] = addresses.size
            return counts
        return np.bincount(self.owner(addresses) + 1, minlength=self.size + 1)


# --------------------------------------------------------------------------- one access


def _as_addresses(pointers) -> np.ndarray:
    return np.asarray(pointers).astype(np.uint64, copy=False)  # int64 vs uint64 would search as float64


class Access:
    """One load or store of one program: its lanes' byte addresses and mask.

    ``direction`` is "loaded" or "stored"; ``program`` the running program's ``(x, y, z)``
    (None if the interpreter did not say). The lane arrays are computed on first use and
    shared by every listener.
    """

    __slots__ = ("direction", "item_bytes", "program", "_pointers", "_mask", "_other", "_active", "_inactive")

    def __init__(self, direction: str, pointers, mask, item_bytes: int, program=None, other=None):
        self.direction = direction
        self.item_bytes = int(item_bytes)
        self.program = program
        self._pointers = pointers
        self._mask = mask
        self._other = other
        self._active: Optional[np.ndarray] = None
        self._inactive: Optional[Tuple[np.ndarray, Optional[np.ndarray]]] = None

    def _arrays(self):
        pointers = _as_addresses(self._pointers)
        if self._mask is None:
            return pointers, None
        mask = np.asarray(self._mask, dtype=bool)
        if mask.shape != pointers.shape:
            pointers, mask = np.broadcast_arrays(pointers, mask)
        return pointers, mask

    def active_addresses(self) -> np.ndarray:
        """Byte addresses of the lanes whose mask is true, as a flat uint64 array."""
        if self._active is None:
            pointers, mask = self._arrays()
            if mask is None or mask.all():
                self._active = pointers.reshape(-1)
            else:
                self._active = pointers[mask]
        return self._active

    def masked_lanes(self) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """(addresses, fill values) of the lanes whose mask is false: they touch no memory.

        A masked-off lane of a load returns its ``other`` value (0 where the kernel gave none:
        the interpreter fills zeros); the fill values are None for stores.
        """
        if self._inactive is None:
            pointers, mask = self._arrays()
            if mask is None or mask.all():
                self._inactive = (np.zeros(0, dtype=np.uint64), None)
            else:
                fills = None
                if self._other is not None:
                    other = np.asarray(self._other)
                    if other.shape != mask.shape:
                        other = np.broadcast_to(other, mask.shape)
                    fills = other[~mask]
                self._inactive = (pointers[~mask], fills)
        return self._inactive


# --------------------------------------------------------------------------- the hooks

_active: List[Any] = []
_restore: List[Tuple[object, str, object]] = []  # (owner, attribute, previous own value or _MISSING)
_builder: Any = None  # interpreter_builder while hooks are installed: it knows the running program


def _running_program():
    index = getattr(_builder, "grid_idx", None)
    return tuple(int(i) for i in index) if index is not None else None


def _report(direction: str, pointers, mask, item_bytes: int, other=None) -> None:
    if not _active:
        return
    access = Access(direction, pointers, mask, item_bytes, _running_program(), other)
    for listener in list(_active):
        listener._on_access(access)


class _WatchedInterpreterModule:
    """Stands in for the ``_interpreter`` C++ module: calls the original, then reports."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load(self, ptrs, masks, other, ret_dtype, *rest, **kwargs):
        result = self._real.load(ptrs, masks, other, ret_dtype, *rest, **kwargs)
        _report("loaded", ptrs, masks, np.dtype(ret_dtype).itemsize, other)
        return result

    def store(self, ptrs, values, masks, *rest, **kwargs):
        result = self._real.store(ptrs, values, masks, *rest, **kwargs)
        _report("stored", ptrs, masks, np.asarray(values).itemsize)
        return result

    def atomic_rmw(self, op, ptrs, values, masks, *rest, **kwargs):
        result = self._real.atomic_rmw(op, ptrs, values, masks, *rest, **kwargs)
        item_bytes = np.asarray(values).itemsize
        _report("loaded", ptrs, masks, item_bytes)
        _report("stored", ptrs, masks, item_bytes)
        _report("atomic", ptrs, masks, item_bytes)  # also counted above; listeners that need it tell them apart
        return result

    def atomic_cas(self, ptrs, cmp, values, *rest, **kwargs):
        result = self._real.atomic_cas(ptrs, cmp, values, *rest, **kwargs)
        item_bytes = np.asarray(values).itemsize
        _report("loaded", ptrs, None, item_bytes)
        _report("stored", ptrs, None, item_bytes)
        _report("atomic", ptrs, None, item_bytes)
        return result


def _uses_global(function, name: str) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and name in code.co_names


def hook_points(what: str = "traffic"):
    """(interpreter module, None) when this Triton can be hooked, else (None, reason).

    ``what`` starts the reason ("traffic: not available on Triton 3.10").
    """
    try:
        import triton
        from triton.runtime import interpreter
    except Exception as error:  # no triton, or an interpreter that will not import
        return None, f"{what}: not available ({type(error).__name__}: {error})"
    version = ".".join(str(getattr(triton, "__version__", "?")).split(".")[:2])
    unavailable = f"{what}: not available on Triton {version}"
    c_module = getattr(interpreter, "_interpreter", None)
    executor = getattr(interpreter, "GridExecutor", None)
    builder = getattr(interpreter, "interpreter_builder", None)
    if not (callable(getattr(c_module, "load", None)) and callable(getattr(c_module, "store", None))):
        return None, unavailable
    if executor is None or "__call__" not in vars(executor) or builder is None:
        return None, unavailable
    builder_type = type(builder)
    if not all(_uses_global(getattr(builder_type, method, None), "_interpreter")
               for method in ("create_masked_load", "create_masked_store")):
        return None, unavailable  # loads no longer go through the C module global: we would see nothing
    runtime_knobs = getattr(getattr(triton, "knobs", None), "runtime", None)
    interpreting = getattr(runtime_knobs, "interpret", _MISSING)
    if interpreting is _MISSING:
        from grader import device

        interpreting = device.interpreter_requested()
    if not interpreting:
        return None, f"{what}: Triton's interpreter is off (set TRITON_INTERPRET=1 before importing triton)"
    return interpreter, None


def argument_tensors(names, args, kwargs) -> List[Tuple[str, Any]]:
    """(name, tensor) for every tensor argument of a launch, tuples flattened as name[i]."""
    found: List[Tuple[str, Any]] = []

    def visit(name, value):
        if isinstance(value, tuple):
            for index, item in enumerate(value):
                visit(f"{name}[{index}]", item)
        elif hasattr(value, "block_shape") and hasattr(getattr(value, "base", None), "data_ptr"):
            found.append((name, value.base))  # a host-side TensorDescriptor
        elif hasattr(value, "data_ptr"):
            found.append((name, value))  # a torch tensor, or triton's TensorWrapper around one

    for index, value in enumerate(args):
        visit(names[index] if index < len(names) else f"arg{index}", value)
    for name, value in kwargs.items():
        visit(name, value)
    return found


def _set(owner, attribute: str, value) -> None:
    _restore.append((owner, attribute, vars(owner).get(attribute, _MISSING)))
    setattr(owner, attribute, value)


def _install(interpreter) -> None:
    global _builder
    executor = interpreter.GridExecutor
    builder = interpreter.interpreter_builder
    original_call = vars(executor)["__call__"]
    original_init_args = vars(executor).get("_init_args_hst")
    original_set_grid_dim = getattr(builder, "set_grid_dim", None)

    def watched_call(self, *args_dev, **kwargs):
        kernel = getattr(getattr(self, "fn", None), "__name__", "kernel")
        names = list(getattr(self, "arg_names", ()) or ())
        arguments = argument_tensors(names, args_dev, kwargs)
        for listener in list(_active):
            listener._begin_launch(kernel, arguments)
        return original_call(self, *args_dev, **kwargs)

    def watched_init_args(self, args_dev, kwargs):
        args_host, kwargs_host = original_init_args(self, args_dev, kwargs)
        names = list(getattr(self, "arg_names", ()) or ())
        device = argument_tensors(names, args_dev, kwargs)
        host = argument_tensors(names, args_host, kwargs_host)
        host_shift = {}
        for (_, on_device), (_, on_host) in zip(device, host):
            device_base, host_base = storage_base(on_device), storage_base(on_host)
            if device_base is not None and host_base is not None and device_base != host_base:
                host_shift[device_base] = host_base - device_base
        for listener in list(_active):
            listener._set_host_arguments(host, host_shift)
        return args_host, kwargs_host

    def watched_set_grid_dim(*grid):
        for listener in list(_active):
            listener._set_grid(grid)
        return original_set_grid_dim(*grid)

    _set(interpreter, "_interpreter", _WatchedInterpreterModule(interpreter._interpreter))
    _set(executor, "__call__", watched_call)
    if callable(original_init_args):
        _set(executor, "_init_args_hst", watched_init_args)
    if callable(original_set_grid_dim):
        _set(builder, "set_grid_dim", watched_set_grid_dim)
    _builder = builder


def _uninstall() -> None:
    global _builder
    while _restore:
        owner, attribute, previous = _restore.pop()
        if previous is _MISSING:
            delattr(owner, attribute)
        else:
            setattr(owner, attribute, previous)
    _builder = None


@contextlib.contextmanager
def listening(listener, interpreter) -> Iterator[Any]:
    """Report every interpreted launch and memory access inside the block to ``listener``.

    ``interpreter`` is what `hook_points` returned.  Blocks may nest; the hooks are removed
    when the last one exits, also on errors.
    """
    if not _active:
        _install(interpreter)
    _active.append(listener)
    try:
        yield listener
    finally:
        _active.remove(listener)
        if not _active:
            _uninstall()
