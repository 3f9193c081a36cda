"""Count the bytes a Triton kernel moves, by watching Triton's interpreter.

The course's central question is "how many bytes did this kernel move, and how
many did it have to move?".  Under ``TRITON_INTERPRET=1`` every ``tl.load`` and
``tl.store`` runs in Python, so we can simply watch them::

    from grader.traffic import count_traffic
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        add_kernel[grid](x, y, out, n, BLOCK=256)
    counter.loaded_bytes("x"), counter.stored_bytes("out"), counter.passes("x")

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
between releases).  Inside ``with count_traffic()`` the module global
``triton.runtime.interpreter._interpreter`` is replaced by a thin proxy whose
four memory functions count and then call the originals; everything else is
delegated unchanged.  Three more hooks give each launch its context:

* ``GridExecutor.__call__`` - one call per kernel launch: the launch count and
  the kernel's name;
* ``interpreter_builder.set_grid_dim`` - called once per launch with the padded
  ``(x, y, z)`` grid (so callable grids need not be re-evaluated);
* ``GridExecutor._init_args_hst`` (optional) - the host copies of the
  arguments: their names give the per-argument tally, and where a device
  tensor was copied to a different host address (GPU tensors under the
  interpreter) the watched ranges are translated to the host copy.

All hook points are looked up with ``getattr``; if the required ones
(``_interpreter.load/store``, ``GridExecutor.__call__``, and builder methods
that really go through ``_interpreter``) are missing, or the interpreter is
off, nothing is patched and the counter reports ``available = False`` with a
reason.  Hooks exist only while at least one ``count_traffic()`` block is open
and are removed on exit, also when the block raises.

What is counted, and what is not
--------------------------------
* Counted: the bytes of lanes whose mask is true, at the element size the
  lane really reads or writes.  A masked-out tail, ``other=`` fill values,
  block-pointer ``boundary_check`` padding and descriptor out-of-bounds padding
  are not memory traffic and are not counted.  An atomic counts once as a load
  and once as a store (``atomic_cas`` counts every lane, whether or not the
  compare succeeded), and its bytes are also tallied as atomic (``atomic_bytes``,
  ``as_dict()["atomics"]`` by kernel): on a GPU the order in which programs'
  atomics land changes from run to run, so a float sum made with them is not
  reproducible, while the interpreter runs programs one after the other.
* Not counted: anything that does not reach ``_interpreter`` - the host-side
  copies the interpreter makes of the arguments, ``pre_run_hooks`` (e.g. an
  autotuner's ``reset_to_zero``), torch work outside kernels, kernels that are
  not run by the interpreter (compiled GPU kernels), and caches: every access
  counts as DRAM traffic, as if there were no L1/L2 (so re-reads that a real
  GPU would serve from cache still count; that is the point of "passes").
* Attribution is by address.  An address inside several watched ranges goes
  to the smallest range (a view beats the buffer it views); on a tie, to the
  name watched first.  Addresses in no watched range go to
  ``"(outside any tensor)"``.  The counter is not thread-safe.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

__all__ = ["OUTSIDE", "Traffic", "count_traffic", "describe", "format_bytes", "traffic_available"]

OUTSIDE = "(outside any tensor)"
"""Bucket for bytes at addresses that no watched tensor covers (e.g. out-of-bounds reads)."""

_MISSING = object()


# --------------------------------------------------------------------------- byte ranges


def _tensor_range(tensor) -> Tuple[int, int, int]:
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


def _storage_base(tensor) -> Optional[int]:
    """Address of the storage a tensor lives in (the key for device->host translation)."""
    if not hasattr(tensor, "untyped_storage") and hasattr(tensor, "base"):
        tensor = tensor.base
    try:
        return int(tensor.untyped_storage().data_ptr())
    except Exception:
        return None


class _RangeTable:
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

    def count(self, addresses: np.ndarray) -> np.ndarray:
        """Lanes per owner: index 0 is "no owner", index i + 1 is range i."""
        if self.edges.size == 0 or addresses.size == 0:
            counts = np.zeros(self.size + 1, dtype=np.int64)
            counts[0] = addresses.size
            return counts
        owner = self.owners[np.searchsorted(self.edges, addresses, side="right")]
        return np.bincount(owner + 1, minlength=self.size + 1)


# --------------------------------------------------------------------------- the counter


class Traffic:
    """Bytes loaded and stored by interpreted kernel launches, per watched tensor.

    Created by :func:`count_traffic`.  ``available`` is False (and ``reason``
    says why) when this Triton cannot be hooked; the object then still accepts
    ``watch`` and answers every query with zeros.
    """

    def __init__(self, available: bool = True, reason: str = ""):
        self.available = available
        self.reason = reason
        self.launches: List[Dict[str, Any]] = []
        self._watched: Dict[str, Any] = {}  # name -> tensor, in watch order
        self._loaded: Dict[str, int] = {OUTSIDE: 0}
        self._stored: Dict[str, int] = {OUTSIDE: 0}
        self._atomic: Dict[str, int] = {OUTSIDE: 0}  # bytes of atomic lanes, per watched tensor
        #: Bytes of atomic lanes per kernel name (read-modify-writes whose order is the hardware's).
        self.atomics: Dict[str, int] = {}
        # kernel name -> argument name (or OUTSIDE) -> {"loaded": B, "stored": B}
        self.arguments: Dict[str, Dict[str, Dict[str, int]]] = {}
        self._kernel: Optional[str] = None
        self._argument_tensors: List[Tuple[str, Any]] = []
        self._host_shift: Dict[int, int] = {}  # device storage address -> host minus device
        self._tables: Optional[Tuple[_RangeTable, List[str], _RangeTable, List[str]]] = None

    # ---- registration

    def watch(self, name: str, tensor):
        """Attribute accesses inside ``tensor``'s byte range to ``name``; returns ``tensor``."""
        if name == OUTSIDE:
            raise ValueError(f"{OUTSIDE!r} is reserved for unattributed bytes")
        self._watched[name] = tensor
        self._loaded.setdefault(name, 0)
        self._stored.setdefault(name, 0)
        self._atomic.setdefault(name, 0)
        self._tables = None
        return tensor

    # ---- queries

    def _check(self, name: str) -> None:
        if name not in self._loaded:
            watched = ", ".join(repr(n) for n in self._watched) or "nothing"
            raise KeyError(f"{name!r} is not watched (watched: {watched})")

    def loaded_bytes(self, name: str) -> int:
        self._check(name)
        return self._loaded[name]

    def stored_bytes(self, name: str) -> int:
        self._check(name)
        return self._stored[name]

    def atomic_bytes(self, name: str) -> int:
        """Bytes of ``name`` touched by atomics (also counted in its loaded and stored bytes)."""
        self._check(name)
        return self._atomic[name]

    def size_bytes(self, name: str) -> int:
        """Bytes of the watched tensor's elements: what one full pass over it moves."""
        self._check(name)
        if name == OUTSIDE:
            raise ValueError(f"{OUTSIDE!r} has no size")
        return _tensor_range(self._watched[name])[2]

    def passes(self, name: str) -> float:
        """How many times the kernel(s) read ``name`` in full: 1.0 is one read of every byte."""
        size = self.size_bytes(name)
        return self._loaded[name] / size if size else 0.0

    def write_passes(self, name: str) -> float:
        size = self.size_bytes(name)
        return self._stored[name] / size if size else 0.0

    @property
    def total_loaded(self) -> int:
        return sum(self._loaded.values())

    @property
    def total_stored(self) -> int:
        return sum(self._stored.values())

    def as_dict(self) -> Dict[str, Any]:
        """JSON-ready summary (lists, not tuples, so it survives a JSON round trip)."""
        tensors = {
            name: {"loaded": self._loaded[name], "stored": self._stored[name], "size": self.size_bytes(name)}
            for name in self._watched
        }
        if self._loaded[OUTSIDE] or self._stored[OUTSIDE]:
            tensors[OUTSIDE] = {"loaded": self._loaded[OUTSIDE], "stored": self._stored[OUTSIDE], "size": None}
        for name, entry in tensors.items():
            if self._atomic.get(name):
                entry["atomic"] = self._atomic[name]
        return {
            "available": self.available,
            "reason": self.reason,
            "launches": [{"kernel": launch["kernel"], "grid": list(launch["grid"] or ())} for launch in self.launches],
            "tensors": tensors,
            "arguments": {kernel: {arg: dict(counts) for arg, counts in args.items()}
                          for kernel, args in self.arguments.items()},
            "loaded": self.total_loaded,
            "stored": self.total_stored,
            "atomics": dict(self.atomics),
        }

    def __repr__(self) -> str:
        if not self.available:
            return f"Traffic(unavailable: {self.reason})"
        return (f"Traffic({len(self.launches)} launches, loaded {format_bytes(self.total_loaded)}, "
                f"stored {format_bytes(self.total_stored)})")

    # ---- called by the hooks

    def _record_atomic(self, addresses: np.ndarray, item_bytes: int) -> None:
        watched_table, watched_names, _, _ = self._range_tables()
        counts = watched_table.count(addresses) * item_bytes
        self._atomic[OUTSIDE] += int(counts[0])
        for name, nbytes in zip(watched_names, counts[1:].tolist()):
            self._atomic[name] += nbytes
        kernel = self._kernel or "(no launch)"
        self.atomics[kernel] = self.atomics.get(kernel, 0) + int(addresses.size) * item_bytes

    def _begin_launch(self, kernel: str, arguments: List[Tuple[str, Any]]) -> None:
        self.launches.append({"kernel": kernel, "grid": None})
        self._kernel = kernel
        self._argument_tensors = arguments
        self._host_shift = {}
        self._tables = None

    def _set_host_arguments(self, arguments: List[Tuple[str, Any]], host_shift: Dict[int, int]) -> None:
        self._argument_tensors = arguments
        self._host_shift = host_shift
        self._tables = None

    def _set_grid(self, grid: Tuple[int, int, int]) -> None:
        if self.launches and self.launches[-1]["grid"] is None:
            self.launches[-1]["grid"] = tuple(int(g) for g in grid)

    def _range_tables(self):
        """Watched and argument range tables, in the address space the interpreter sees."""
        if self._tables is None:
            watched_names = list(self._watched)
            watched_ranges = []
            for tensor in self._watched.values():
                start, extent, _ = _tensor_range(tensor)
                start += self._host_shift.get(_storage_base(tensor), 0)
                watched_ranges.append((start, extent))
            argument_names = [name for name, _ in self._argument_tensors]
            argument_ranges = [_tensor_range(tensor)[:2] for _, tensor in self._argument_tensors]
            self._tables = (_RangeTable(watched_ranges), watched_names,
                            _RangeTable(argument_ranges), argument_names)
        return self._tables

    def _record(self, direction: str, addresses: np.ndarray, item_bytes: int) -> None:
        watched_table, watched_names, argument_table, argument_names = self._range_tables()
        totals = self._loaded if direction == "loaded" else self._stored
        counts = watched_table.count(addresses) * item_bytes
        totals[OUTSIDE] += int(counts[0])
        for name, nbytes in zip(watched_names, counts[1:].tolist()):
            totals[name] += nbytes
        kernel = self.arguments.setdefault(self._kernel or "(no launch)", {})
        counts = argument_table.count(addresses) * item_bytes
        for name, nbytes in zip([OUTSIDE] + argument_names, counts.tolist()):
            if nbytes:
                entry = kernel.setdefault(name, {"loaded": 0, "stored": 0})
                entry[direction] += nbytes


# --------------------------------------------------------------------------- the hooks

_active: List[Traffic] = []
_restore: List[Tuple[object, str, object]] = []  # (owner, attribute, previous own value or _MISSING)


def _active_lanes(pointers, mask) -> np.ndarray:
    """Byte addresses of the lanes whose mask is true, as a flat uint64 array."""
    pointers = np.asarray(pointers).astype(np.uint64, copy=False)  # int64 vs uint64 would search as float64
    if mask is None:
        return pointers.reshape(-1)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != pointers.shape:
        pointers, mask = np.broadcast_arrays(pointers, mask)
    return pointers.reshape(-1) if mask.all() else pointers[mask]


def _record(direction: str, pointers, mask, item_bytes: int) -> None:
    if not _active:
        return
    addresses = _active_lanes(pointers, mask)
    for counter in _active:
        if direction == "atomic":
            counter._record_atomic(addresses, item_bytes)
        else:
            counter._record(direction, addresses, item_bytes)


class _CountingInterpreterModule:
    """Stands in for the ``_interpreter`` C++ module: counts, then delegates."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load(self, ptrs, masks, other, ret_dtype, *rest, **kwargs):
        result = self._real.load(ptrs, masks, other, ret_dtype, *rest, **kwargs)
        _record("loaded", ptrs, masks, np.dtype(ret_dtype).itemsize)
        return result

    def store(self, ptrs, values, masks, *rest, **kwargs):
        result = self._real.store(ptrs, values, masks, *rest, **kwargs)
        _record("stored", ptrs, masks, np.asarray(values).itemsize)
        return result

    def atomic_rmw(self, op, ptrs, values, masks, *rest, **kwargs):
        result = self._real.atomic_rmw(op, ptrs, values, masks, *rest, **kwargs)
        item_bytes = np.asarray(values).itemsize
        _record("loaded", ptrs, masks, item_bytes)
        _record("stored", ptrs, masks, item_bytes)
        _record("atomic", ptrs, masks, item_bytes)
        return result

    def atomic_cas(self, ptrs, cmp, values, *rest, **kwargs):
        result = self._real.atomic_cas(ptrs, cmp, values, *rest, **kwargs)
        item_bytes = np.asarray(values).itemsize
        _record("loaded", ptrs, None, item_bytes)
        _record("stored", ptrs, None, item_bytes)
        _record("atomic", ptrs, None, item_bytes)
        return result


def _uses_global(function, name: str) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and name in code.co_names


def _hook_points():
    """(interpreter module, None) when this Triton can be hooked, else (None, reason)."""
    try:
        import triton
        from triton.runtime import interpreter
    except Exception as error:  # no triton, or an interpreter that will not import
        return None, f"traffic: not available ({type(error).__name__}: {error})"
    version = ".".join(str(getattr(triton, "__version__", "?")).split(".")[:2])
    unavailable = f"traffic: not available on Triton {version}"
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
        return None, unavailable  # loads no longer go through the C module global: we would count nothing
    runtime_knobs = getattr(getattr(triton, "knobs", None), "runtime", None)
    interpreting = getattr(runtime_knobs, "interpret", _MISSING)
    if interpreting is _MISSING:
        interpreting = os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")
    if not interpreting:
        return None, "traffic: Triton's interpreter is off (set TRITON_INTERPRET=1 before importing triton)"
    return interpreter, None


def traffic_available() -> Tuple[bool, str]:
    """(True, "") when kernel traffic can be counted here, else (False, why not)."""
    interpreter, reason = _hook_points()
    return interpreter is not None, reason or ""


def _argument_tensors(names, args, kwargs) -> List[Tuple[str, Any]]:
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
    executor = interpreter.GridExecutor
    builder = interpreter.interpreter_builder
    original_call = vars(executor)["__call__"]
    original_init_args = vars(executor).get("_init_args_hst")
    original_set_grid_dim = getattr(builder, "set_grid_dim", None)

    def counted_call(self, *args_dev, **kwargs):
        kernel = getattr(getattr(self, "fn", None), "__name__", "kernel")
        names = list(getattr(self, "arg_names", ()) or ())
        arguments = _argument_tensors(names, args_dev, kwargs)
        for counter in _active:
            counter._begin_launch(kernel, arguments)
        return original_call(self, *args_dev, **kwargs)

    def counted_init_args(self, args_dev, kwargs):
        args_host, kwargs_host = original_init_args(self, args_dev, kwargs)
        names = list(getattr(self, "arg_names", ()) or ())
        device = _argument_tensors(names, args_dev, kwargs)
        host = _argument_tensors(names, args_host, kwargs_host)
        host_shift = {}
        for (_, on_device), (_, on_host) in zip(device, host):
            device_base, host_base = _storage_base(on_device), _storage_base(on_host)
            if device_base is not None and host_base is not None and device_base != host_base:
                host_shift[device_base] = host_base - device_base
        for counter in _active:
            counter._set_host_arguments(host, host_shift)
        return args_host, kwargs_host

    def counted_set_grid_dim(*grid):
        for counter in _active:
            counter._set_grid(grid)
        return original_set_grid_dim(*grid)

    _set(interpreter, "_interpreter", _CountingInterpreterModule(interpreter._interpreter))
    _set(executor, "__call__", counted_call)
    if callable(original_init_args):
        _set(executor, "_init_args_hst", counted_init_args)
    if callable(original_set_grid_dim):
        _set(builder, "set_grid_dim", counted_set_grid_dim)


def _uninstall() -> None:
    while _restore:
        owner, attribute, previous = _restore.pop()
        if previous is _MISSING:
            delattr(owner, attribute)
        else:
            setattr(owner, attribute, previous)


@contextlib.contextmanager
def count_traffic() -> Iterator[Traffic]:
    """Count the memory traffic of every interpreted kernel launch inside the block.

    Yields a :class:`Traffic`; call ``counter.watch(name, tensor)`` for the
    tensors you want named.  Blocks may nest (each counter sees every launch in
    its block); hooks are removed when the last block exits, also on errors.
    """
    interpreter, reason = _hook_points()
    if interpreter is None:
        yield Traffic(available=False, reason=reason)
        return
    counter = Traffic()
    if not _active:
        _install(interpreter)
    _active.append(counter)
    try:
        yield counter
    finally:
        _active.remove(counter)
        if not _active:
            _uninstall()


# --------------------------------------------------------------------------- reporting


def format_bytes(n) -> str:
    """Human size: "17 B", "3.0 KiB", "64.0 KiB", "64 MiB", "1.5 GiB".

    KiB always carry one decimal (the course's small test shapes live there and
    the decimal tells 64.0 from 64.5); MiB and above drop it when whole.
    """
    n = int(n)
    if abs(n) < 1024:
        return f"{n} B"
    value, unit = n / 1024, "KiB"
    for larger in ("MiB", "GiB", "TiB"):
        if abs(value) < 1024:
            break
        value, unit = value / 1024, larger
    if unit != "KiB" and value == int(value):
        return f"{int(value)} {unit}"
    return f"{value:.1f} {unit}"


def _times(count: float) -> str:
    return str(int(round(count))) if abs(count - round(count)) < 1e-9 else f"{count:.2f}"


def _phrase(verb: str, noun: str, name: str, moved: int, size: int, allowed: float = 1.0) -> str:
    if size == 0:
        return f"{verb} `{name}` ({format_bytes(moved)})"
    times = moved / size
    if moved == size:
        return f"{verb} `{name}` once"
    if moved < size:
        return f"{verb} {100 * times:.0f}% of `{name}` ({format_bytes(moved)} of {format_bytes(size)})"
    minimum = f"one {noun}" if allowed == 1 else f"{_times(allowed)} {noun}s"
    return f"{verb} `{name}` {times:.2f} times ({_times(times)} × {format_bytes(size)}; the minimum is {minimum})"


def describe(counter: Traffic, minimum_bytes: int, allowed_reads: Dict[str, float] | None = None) -> str:
    """One sentence a learner can read: how often each tensor was read and written,
    what went outside every tensor, and how the total compares with the minimum.

    Example: "read `x` 2.00 times (2 × 64.0 KiB; the minimum is one read), wrote
    `out` once: 192.0 KiB moved, 1.50× the minimum of 128.0 KiB". ``allowed_reads`` gives the
    minimum number of reads for tensors whose algorithm must read them more than once
    (``{"x": 2}`` for the online softmax), so the sentence does not call that a waste.
    """
    if not counter.available:
        return counter.reason
    if not counter.launches:
        return "no kernel launch was counted"
    parts = []
    for name in counter._watched:
        size = counter.size_bytes(name)
        if counter.loaded_bytes(name):
            parts.append(_phrase("read", "read", name, counter.loaded_bytes(name), size,
                                 (allowed_reads or {}).get(name, 1.0)))
        if counter.stored_bytes(name):
            parts.append(_phrase("wrote", "write", name, counter.stored_bytes(name), size))
    outside = counter.loaded_bytes(OUTSIDE) + counter.stored_bytes(OUTSIDE)
    if outside:
        parts.append(f"touched {format_bytes(outside)} outside every watched tensor")
    moved = counter.total_loaded + counter.total_stored
    summary = f"{format_bytes(moved)} moved"
    if minimum_bytes > 0:
        summary += f", {moved / minimum_bytes:.2f}× the minimum of {format_bytes(minimum_bytes)}"
    return (", ".join(parts) + ": " if parts else "") + summary
