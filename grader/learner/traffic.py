"""Count the bytes a Triton kernel moves, by watching Triton's interpreter.

The course's central question is "how many bytes did this kernel move, and how
many did it have to move?".  Under ``TRITON_INTERPRET=1`` every ``tl.load`` and
``tl.store`` runs in Python, so we can simply watch them::

    from grader.learner.traffic import count_traffic
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        add_kernel[grid](x, y, out, n, BLOCK=256)
    counter.loaded_bytes("x"), counter.stored_bytes("out"), counter.passes("x")

How it hooks the interpreter
----------------------------
Through `grader.learner.interpreter_hooks`, the hook layer it shares with `grader.learner.access_map`: the
four memory functions of the interpreter's C++ extension (every load, store and atomic ends
there, with its final byte addresses and lane masks), one hook per launch, the launch's grid
and the host copies of its arguments.  If this Triton cannot be hooked, or the interpreter is
off, the counter reports ``available = False`` with a reason.  Hooks exist only while at least
one ``count_traffic()`` block (or another listener) is open and are removed on exit, also when
the block raises; in the learner's process one listener (`EveryCall`) is open from before the
learner's file is imported to the end, so every call there is counted with the same hooks.

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
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from grader.learner import interpreter_hooks as hooks
from grader.learner.interpreter_hooks import RangeTable, storage_base, tensor_range

__all__ = ["OUTSIDE", "EveryCall", "Traffic", "TrafficSummary", "count_traffic", "describe", "format_bytes", "traffic_available"]

OUTSIDE = "(outside any tensor)"
"""Bucket for bytes at addresses that no watched tensor covers (e.g. out-of-bounds reads)."""


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
        #: Bytes outside every tensor by the watched tensor they lie nearest to: (name, "past" its end or
        #: "before" its start, "loaded" or "stored") -> B. What lets a message say "past the end of `x`".
        self._near: Dict[Tuple[str, str, str], int] = {}
        self._kernel: Optional[str] = None
        self._argument_tensors: List[Tuple[str, Any]] = []
        self._host_shift: Dict[int, int] = {}  # device storage address -> host minus device
        self._tables: Optional[Tuple[RangeTable, List[str], RangeTable, List[str]]] = None

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

    def names(self) -> List[str]:
        """The watched tensors' names, in watch order."""
        return list(self._watched)

    def atomic_bytes(self, name: str) -> int:
        """Bytes of ``name`` touched by atomics (also counted in its loaded and stored bytes)."""
        self._check(name)
        return self._atomic[name]

    def size_bytes(self, name: str) -> int:
        """Bytes of the watched tensor's elements: what one full pass over it moves."""
        self._check(name)
        if name == OUTSIDE:
            raise ValueError(f"{OUTSIDE!r} has no size")
        return tensor_range(self._watched[name])[2]

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
            "outside_near": [{"tensor": name, "where": where, direction: nbytes}
                             for (name, where, direction), nbytes in self._near.items()],
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

    def _watched_ranges(self) -> List[Tuple[int, int]]:
        """(start, extent) of each watched tensor, in watch order, in the address space the interpreter sees."""
        ranges = []
        for tensor in self._watched.values():
            start, extent, _ = tensor_range(tensor)
            ranges.append((start + self._host_shift.get(storage_base(tensor), 0), extent))
        return ranges

    def _range_tables(self):
        """Watched and argument range tables, in the address space the interpreter sees."""
        if self._tables is None:
            watched_names = list(self._watched)
            watched_ranges = self._watched_ranges()
            argument_names = [name for name, _ in self._argument_tensors]
            argument_ranges = [tensor_range(tensor)[:2] for _, tensor in self._argument_tensors]
            self._tables = (RangeTable(watched_ranges), watched_names,
                            RangeTable(argument_ranges), argument_names)
        return self._tables

    def _on_access(self, access: hooks.Access) -> None:
        if access.direction == "atomic":
            self._record_atomic(access.active_addresses(), access.item_bytes)
        else:
            self._record(access.direction, access.active_addresses(), access.item_bytes)

    def _record(self, direction: str, addresses: np.ndarray, item_bytes: int) -> None:
        watched_table, watched_names, argument_table, argument_names = self._range_tables()
        totals = self._loaded if direction == "loaded" else self._stored
        counts = watched_table.count(addresses) * item_bytes
        totals[OUTSIDE] += int(counts[0])
        if counts[0]:
            self._record_near(direction, addresses[watched_table.owner(addresses) < 0], item_bytes)
        for name, nbytes in zip(watched_names, counts[1:].tolist()):
            totals[name] += nbytes
        kernel = self.arguments.setdefault(self._kernel or "(no launch)", {})
        counts = argument_table.count(addresses) * item_bytes
        for name, nbytes in zip([OUTSIDE] + argument_names, counts.tolist()):
            if nbytes:
                entry = kernel.setdefault(name, {"loaded": 0, "stored": 0})
                entry[direction] += nbytes


    def _record_near(self, direction: str, outside: np.ndarray, item_bytes: int) -> None:
        """Attribute addresses outside every watched tensor to the nearest one: past its end or before its start."""
        ranges = [(name, start, start + extent) for name, (start, extent) in zip(self._watched, self._watched_ranges())]
        if not ranges:
            return
        starts = np.array([r[1] for r in ranges], dtype=np.int64)
        ends = np.array([r[2] for r in ranges], dtype=np.int64)
        big = np.iinfo(np.int64).max
        lanes = np.zeros(2 * len(ranges), dtype=np.int64)  # per tensor: past its end, before its start
        for first in range(0, outside.size, 1 << 18):  # in chunks: (addresses x tensors) tables stay small
            addresses = outside[first:first + (1 << 18)].astype(np.int64)
            # distance past each tensor's end (>= 0 when the address lies after it), and before each start
            past = addresses[:, None] - ends[None, :]
            before = starts[None, :] - 1 - addresses[:, None]
            past = np.where(past >= 0, past, big)
            before = np.where(before >= 0, before, big)
            is_past = past.min(axis=1) <= before.min(axis=1)
            labels = np.where(is_past, past.argmin(axis=1) * 2, before.argmin(axis=1) * 2 + 1)
            lanes += np.bincount(labels, minlength=2 * len(ranges))
        for label, count in enumerate(lanes.tolist()):
            if count:
                key = (ranges[label // 2][0], "past" if label % 2 == 0 else "before", direction)
                self._near[key] = self._near.get(key, 0) + count * item_bytes


class TrafficSummary:
    """A counter's figures as data (`Traffic.as_dict`), with the same queries: what the judge
    reads back from the learner's process, where the counting happened."""

    def __init__(self, data: Dict[str, Any]):
        self.available = bool(data.get("available"))
        self.reason = str(data.get("reason") or "")
        self.launches = [dict(launch) for launch in data.get("launches") or [] if isinstance(launch, dict)]
        tensors = data.get("tensors") or {}
        self._tensors = {str(name): {"loaded": int(t.get("loaded") or 0), "stored": int(t.get("stored") or 0),
                                     "size": None if t.get("size") is None else int(t["size"]),
                                     "atomic": int(t.get("atomic") or 0)}
                         for name, t in tensors.items() if isinstance(t, dict)}
        self.atomics = {str(k): int(v) for k, v in (data.get("atomics") or {}).items()}
        self._tensors.setdefault(OUTSIDE, {"loaded": 0, "stored": 0, "size": None, "atomic": 0})
        #: (tensor, "past" | "before", "loaded" | "stored") -> bytes outside every tensor nearest to it.
        self.outside_near: Dict[Tuple[str, str, str], int] = {}
        for entry in data.get("outside_near") or []:
            if isinstance(entry, dict) and entry.get("where") in ("past", "before") and str(entry.get("tensor")) in tensors:
                for direction in ("loaded", "stored"):
                    if isinstance(entry.get(direction), int) and entry[direction] > 0:
                        key = (str(entry["tensor"]), entry["where"], direction)
                        self.outside_near[key] = self.outside_near.get(key, 0) + entry[direction]
        self._data = data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "TrafficSummary":
        return cls(data if isinstance(data, dict) else {})

    def names(self) -> List[str]:
        return [name for name in self._tensors if name != OUTSIDE]

    def _entry(self, name: str) -> Dict[str, Any]:
        if name not in self._tensors:
            raise KeyError(f"{name!r} is not watched (watched: {', '.join(map(repr, self.names())) or 'nothing'})")
        return self._tensors[name]

    def loaded_bytes(self, name: str) -> int:
        return self._entry(name)["loaded"]

    def stored_bytes(self, name: str) -> int:
        return self._entry(name)["stored"]

    def atomic_bytes(self, name: str) -> int:
        return self._entry(name)["atomic"]

    def size_bytes(self, name: str) -> int:
        size = self._entry(name)["size"]
        if size is None:
            raise ValueError(f"{name!r} has no size")
        return size

    def size_or_none(self, name: str) -> Optional[int]:
        """The size reported for ``name``, or None where there is none (a name not watched)."""
        entry = self._tensors.get(name)
        return None if entry is None else entry["size"]

    def passes(self, name: str) -> float:
        size = self.size_bytes(name)
        return self.loaded_bytes(name) / size if size else 0.0

    def write_passes(self, name: str) -> float:
        size = self.size_bytes(name)
        return self.stored_bytes(name) / size if size else 0.0

    @property
    def total_loaded(self) -> int:
        return sum(t["loaded"] for t in self._tensors.values())

    @property
    def total_stored(self) -> int:
        return sum(t["stored"] for t in self._tensors.values())

    def as_dict(self) -> Dict[str, Any]:
        tensors = {name: {k: v for k, v in t.items() if k != "atomic" or v} for name, t in self._tensors.items()
                   if name != OUTSIDE or t["loaded"] or t["stored"]}
        return {**{k: v for k, v in self._data.items() if k not in ("tensors", "loaded", "stored", "outside_near")},
                "available": self.available, "reason": self.reason, "launches": self.launches,
                "tensors": tensors, "loaded": self.total_loaded, "stored": self.total_stored,
                "atomics": dict(self.atomics),
                "outside_near": [{"tensor": name, "where": where, direction: nbytes}
                                 for (name, where, direction), nbytes in self.outside_near.items()]}


# --------------------------------------------------------------------------- counting a block


def traffic_available() -> Tuple[bool, str]:
    """(True, "") when kernel traffic can be counted here, else (False, why not)."""
    interpreter, reason = hooks.hook_points("traffic")
    return interpreter is not None, reason or ""


@contextlib.contextmanager
def count_traffic() -> Iterator[Traffic]:
    """Count the memory traffic of every interpreted kernel launch inside the block.

    Yields a :class:`Traffic`; call ``counter.watch(name, tensor)`` for the
    tensors you want named.  Blocks may nest (each counter sees every launch in
    its block); hooks are removed when the last block exits, also on errors.
    """
    interpreter, reason = hooks.hook_points("traffic")
    if interpreter is None:
        yield Traffic(available=False, reason=reason)
        return
    with hooks.listening(Traffic(), interpreter) as counter:
        yield counter


class EveryCall:
    """The learner's process's counter (interpreter): its hooks are installed once, when it is made
    (before the learner's file is imported), and stay for the whole process, so every call of the
    learner's function runs with the same hooks in place and has its bytes counted (`begin` ...
    `end` around each call), whatever the judge does with the answer. A file that looks for the
    hooks finds them in every call, or in none."""

    def __init__(self):
        interpreter, reason = hooks.hook_points("traffic")
        self.reason = reason or ""
        self.current: Optional[Traffic] = None
        # Taken now, before the learner's file is imported: a file that replaces Traffic.as_dict
        # (to report one read where its kernel made two) does not change what is reported.
        self._as_dict = Traffic.as_dict
        self._listening = None
        if interpreter is not None:
            self._listening = hooks.listening(self, interpreter)
            self._listening.__enter__()

    def begin(self) -> Traffic:
        """A fresh counter for the call that starts now."""
        self.current = Traffic() if self._listening is not None else Traffic(available=False, reason=self.reason)
        return self.current

    def end(self) -> None:
        self.current = None

    def report(self, counter: Traffic) -> Dict[str, Any]:
        """``counter``'s figures, by `Traffic.as_dict` as it was when this object was made."""
        return self._as_dict(counter)

    # The listener's four methods, passed on to the counter of the call in progress (none between calls).
    def _begin_launch(self, kernel, arguments) -> None:
        if self.current is not None:
            self.current._begin_launch(kernel, arguments)

    def _set_host_arguments(self, arguments, host_shift) -> None:
        if self.current is not None:
            self.current._set_host_arguments(arguments, host_shift)

    def _set_grid(self, grid) -> None:
        if self.current is not None:
            self.current._set_grid(grid)

    def _on_access(self, access) -> None:
        if self.current is not None:
            self.current._on_access(access)


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
        share = 100 * times
        shown = f"{share:.0f}" if share < 99.5 else f"{share:.1f}" if share < 99.95 else f"{share:.2f}"
        return f"{verb} only {shown}% of `{name}` ({format_bytes(moved)} of {format_bytes(size)})"
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
    for name in counter.names():
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
