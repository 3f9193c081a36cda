"""The access map: which elements of each tensor every program loaded and stored.

`grade show N` runs the learner's function once in Triton's interpreter and draws, per tensor,
which program touched which element, what was never written, what was touched more than once,
and what was touched outside the tensor (in the guard regions around it or the gaps between its
rows). This module holds the two halves that never mix:

* **Recording**: `record_access_map(fn, inputs, kwargs)` calls ``fn`` once under the hook layer
  of `grader.learner.interpreter_hooks` (the one `grader.learner.traffic` counts bytes with) and returns an
  `AccessMap`. The tensors in ``inputs`` must already sit in guarded buffers (`grader.wire.guards`);
  outputs the function allocates are guarded and watched as it allocates them.
* **Data**: an `AccessMap` is plain data (numpy arrays, lists, strings) with `to_dict` and
  `from_dict` that round-trip through JSON, so it can be recorded in one process and drawn in
  another. Drawing lives in `grader.commands.access_layout` (cells), `grader.commands.access_terminal` (rich) and
  `grader.commands.access_figure` (matplotlib).

What a map holds, per tensor: its shape, strides and how much watched memory lies before and
after it (the guards), and for each kind of lane - ``loads``, ``stores``, and ``masked`` (lanes a
mask switched off: they touch no memory) - run-length encoded touches::

    [launch, program, start, stop, count]   # elements start..stop-1 (offsets from the view's
                                             # first element) touched count times each

Offsets are in elements of the tensor: negative ones are in the guard before it, offsets at or
past its extent in the guard after it, and offsets inside the extent that hold no element are in
the gaps between strided rows. ``program`` is the program's number in its launch, in the order
the interpreter runs them (x slowest, z fastest: ``x * gy * gz + y * gz + z``).

Each exercise's spec says what to draw: ``show_inputs(size)`` returns a `ShowCase`, small
inputs chosen to expose the exercise's pitfalls.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from grader.learner import interpreter_hooks as hooks

__all__ = ["KINDS", "AccessMap", "Finding", "ShowCase", "TensorMap", "Touches", "parse_size", "record_access_map"]

#: Version of the dictionary layout of `AccessMap.to_dict`.
FORMAT = 1
#: Kinds of lanes a map records: memory read, memory written, and lanes a mask switched off.
KINDS = ("loads", "stores", "masked")
_DIRECTION_KIND = {"loaded": "loads", "stored": "stores"}


# --------------------------------------------------------------------------- what to draw


@dataclass
class ShowCase:
    """The input of `grade show N`: what an exercise's ``show_inputs(size)`` returns.

    ``inputs`` are the function's positional arguments by name, ``kwargs`` its keyword
    arguments (tensors, numbers, None); ``label`` says in a few words what they are
    ("n = 1500, float32"). The tensors are ordinary ones: the caller places them in guarded
    buffers before recording.
    """

    inputs: dict[str, Any]
    kwargs: dict[str, Any] = field(default_factory=dict)
    label: str = ""


def parse_size(size: str | None, default: tuple[int, ...], names: tuple[str, ...], example: str) -> tuple[int, ...]:
    """``--size`` as integers: "1500" or "5,781,1000"; missing trailing values keep their defaults.

    Raises ValueError with a sentence naming the expected values (``names``) and an ``example``.
    """
    if size is None or not str(size).strip():
        return default
    parts = [p for p in str(size).replace("x", ",").split(",")]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        values = []
    if not values or len(values) > len(default) or any(v < 1 for v in values):
        raise ValueError(f"--size takes {', '.join(names)} (positive integers, comma-separated; "
                         f"e.g. --size {example})")
    return tuple(values) + tuple(default[len(values):])


# --------------------------------------------------------------------------- the data


@dataclass
class Touches:
    """The touches of one kind on one tensor, one entry per element offset (sorted)."""

    offset: np.ndarray  # int64, distinct element offsets
    count: np.ndarray  # lanes that touched it, all programs together
    program: np.ndarray  # the first program (global index, see AccessMap.programs) that touched it
    programs: np.ndarray  # how many distinct programs touched it

    def at(self, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(count, first program or -1, distinct programs) at each of ``offsets``."""
        offsets = np.asarray(offsets, dtype=np.int64)
        if len(self.offset) == 0:
            zeros = np.zeros(offsets.shape, dtype=np.int64)
            return zeros, zeros - 1, zeros
        where = np.clip(np.searchsorted(self.offset, offsets), 0, len(self.offset) - 1)
        hit = self.offset[where] == offsets
        return (np.where(hit, self.count[where], 0), np.where(hit, self.program[where], -1),
                np.where(hit, self.programs[where], 0))


@dataclass
class TensorMap:
    """Everything recorded about one tensor (see the module docstring for ``runs``)."""

    name: str
    role: str  # "input", "output", or "argument" (a tensor the function made and passed to a kernel)
    dtype: str
    item_size: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    guard_before: int  # elements of watched memory before the first element (the guard)
    guard_after: int  # elements of watched memory after the last element
    runs: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> (N, 5) int64
    fills: dict[str, int] = field(default_factory=dict)  # fill value of masked-off load lanes -> lanes

    # ---- geometry

    @property
    def numel(self) -> int:
        return int(math.prod(self.shape))

    @property
    def span(self) -> int:
        """Elements from the first to the last element, gaps between rows included."""
        if self.numel == 0:
            return 0
        return 1 + sum((size - 1) * stride for size, stride in zip(self.shape, self.strides))

    def element_offsets(self) -> np.ndarray:
        """The offset of every element, shaped like the tensor."""
        offsets = np.zeros(self.shape, dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(self.shape, self.strides)):
            shape = [1] * len(self.shape)
            shape[axis] = size
            offsets = offsets + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
        return offsets

    def regions(self, offsets: np.ndarray) -> np.ndarray:
        """For each offset: 0 an element, 1 a gap between rows, 2 before the start, 3 past the end."""
        offsets = np.asarray(offsets, dtype=np.int64)
        elements = np.unique(self.element_offsets())
        inside = np.isin(offsets, elements)
        region = np.where(inside, 0, 1)
        region = np.where(offsets < 0, 2, region)
        return np.where(offsets >= self.span, 3, region)

    # ---- touches

    def kind_runs(self, kind: str) -> np.ndarray:
        return self.runs.get(kind, np.zeros((0, 5), dtype=np.int64))

    def touches(self, kind: str, program_index: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Touches:
        """Per element offset: total count, first program, distinct programs (``program_index``
        turns (launch, program) arrays into global program indices)."""
        runs = self.kind_runs(kind)
        if len(runs) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return Touches(empty, empty, empty, empty)
        lengths = runs[:, 3] - runs[:, 2]
        offsets = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in runs[:, 2:4]])
        counts = np.repeat(runs[:, 4], lengths)
        programs = np.repeat(program_index(runs[:, 0], runs[:, 1]), lengths)
        order = np.lexsort((programs, offsets))
        offsets, counts, programs = offsets[order], counts[order], programs[order]
        unique, first, inverse = np.unique(offsets, return_index=True, return_inverse=True)
        total = np.bincount(inverse, weights=counts).astype(np.int64)
        distinct = np.bincount(inverse).astype(np.int64)  # (offset, program) pairs are unique in runs
        return Touches(unique, total, programs[first], distinct)

    # ---- JSON

    def to_dict(self) -> dict:
        return {"name": self.name, "role": self.role, "dtype": self.dtype, "item_size": self.item_size,
                "shape": list(self.shape), "strides": list(self.strides), "guard_before": self.guard_before,
                "guard_after": self.guard_after,
                "runs": {kind: self.kind_runs(kind).tolist() for kind in KINDS},
                "fills": dict(self.fills)}

    @classmethod
    def from_dict(cls, data: dict) -> "TensorMap":
        runs = {kind: np.array(data["runs"].get(kind, []), dtype=np.int64).reshape(-1, 5) for kind in KINDS}
        return cls(name=data["name"], role=data["role"], dtype=data["dtype"], item_size=int(data["item_size"]),
                   shape=tuple(data["shape"]), strides=tuple(data["strides"]),
                   guard_before=int(data["guard_before"]), guard_after=int(data["guard_after"]),
                   runs=runs, fills={str(k): int(v) for k, v in data.get("fills", {}).items()})


@dataclass(frozen=True)
class Finding:
    """One sentence about a map. ``severity``: "loud" (outside a tensor, unwritten, an error),
    "note" (worth a look: read twice, never read) or "ok"."""

    severity: str
    text: str
    tensor: str | None = None


@dataclass
class AccessMap:
    """What one call touched (see the module docstring). Plain data: `to_dict`/`from_dict`."""

    available: bool = True
    reason: str = ""  # why nothing was recorded, when not available
    label: str = ""  # the input, in words
    launches: list[dict] = field(default_factory=list)  # {"kernel": name, "grid": [x, y, z]}
    tensors: list[TensorMap] = field(default_factory=list)
    outside: dict[str, int] = field(default_factory=lambda: {"loads": 0, "stores": 0})  # lanes in no watched memory
    error: str | None = None  # the sentence, when the function raised
    notes: list[str] = field(default_factory=list)  # torch ops that computed or filled

    # ---- programs

    def _launch_sizes(self) -> list[int]:
        sizes = []
        for index, launch in enumerate(self.launches):
            grid = launch.get("grid")
            if grid:
                sizes.append(int(math.prod(grid)))
            else:  # the grid was not reported: as many programs as touched anything
                seen = [int(r[1]) for t in self.tensors for kind in KINDS for r in t.kind_runs(kind) if r[0] == index]
                sizes.append(max(seen, default=-1) + 1)
        return sizes

    def program_index(self, launch: np.ndarray, program: np.ndarray) -> np.ndarray:
        """Global program numbers: launch 0's programs first, then launch 1's, ..."""
        starts = np.concatenate([[0], np.cumsum(self._launch_sizes())]).astype(np.int64)
        launch = np.asarray(launch, dtype=np.int64)
        return starts[np.clip(launch, 0, len(starts) - 1)] + np.asarray(program, dtype=np.int64)

    @property
    def program_count(self) -> int:
        return int(sum(self._launch_sizes()))

    def program_label(self, index: int) -> str:
        """"program 3", "program (1, 0)", or "attention_kernel (1, 0)" when there are several launches."""
        sizes = self._launch_sizes()
        for launch, size in enumerate(sizes):
            if index < size:
                grid = list(self.launches[launch].get("grid") or [size, 1, 1])
                dims = [g for g in grid]
                x, rest = divmod(index, dims[1] * dims[2])
                y, z = divmod(rest, dims[2])
                used = 3 if dims[2] > 1 else 2 if dims[1] > 1 else 1
                where = str(x) if used == 1 else "(" + ", ".join(str(v) for v in (x, y, z)[:used]) + ")"
                who = self.launches[launch]["kernel"] if len(sizes) > 1 else "program"
                return f"{who} {where}"
            index -= size
        return f"program {index}"

    def touches(self, tensor: TensorMap, kind: str) -> Touches:
        return tensor.touches(kind, self.program_index)

    def tensor(self, name: str) -> TensorMap:
        for tensor in self.tensors:
            if tensor.name == name:
                return tensor
        raise KeyError(f"no tensor {name!r} in the map (tensors: {', '.join(t.name for t in self.tensors)})")

    # ---- questions the drawings and the tests ask

    def outside_elements(self, name: str, kind: str) -> dict[str, int]:
        """Distinct offsets of ``kind`` outside the tensor: {"before", "gaps", "after"} (zeros kept)."""
        tensor = self.tensor(name)
        touched = self.touches(tensor, kind)
        region = tensor.regions(touched.offset)
        return {"gaps": int((region == 1).sum()), "before": int((region == 2).sum()), "after": int((region == 3).sum())}

    def element_counts(self, name: str, kind: str) -> np.ndarray:
        """How many lanes of ``kind`` touched each element, shaped like the tensor."""
        tensor = self.tensor(name)
        offsets = tensor.element_offsets()
        count, _, _ = self.touches(tensor, kind).at(offsets.reshape(-1))
        return count.reshape(offsets.shape)

    def element_programs(self, name: str, kind: str) -> np.ndarray:
        """The first program that touched each element (-1: none), shaped like the tensor."""
        tensor = self.tensor(name)
        offsets = tensor.element_offsets()
        _, program, _ = self.touches(tensor, kind).at(offsets.reshape(-1))
        return program.reshape(offsets.shape)

    def findings(self) -> list[Finding]:
        """What the map shows, in sentences: the loud ones first."""
        found: list[Finding] = []
        if not self.available:
            return [Finding("loud", self.reason)]
        if self.error:
            found.append(Finding("loud", self.error))
        for note in self.notes:
            found.append(Finding("loud", note))
        if not self.launches and not self.error:
            found.append(Finding("loud", "no Triton kernel was launched: nothing to draw"))
        for kind, verb in (("loads", "read"), ("stores", "wrote")):
            if self.outside.get(kind):
                found.append(Finding("loud", f"{verb} {self.outside[kind]} lanes at addresses outside every tensor "
                                             "and its guard regions"))
        for tensor in self.tensors:
            found += self._tensor_findings(tensor)
        order = {"loud": 0, "note": 1, "ok": 2}
        return sorted(found, key=lambda f: order[f.severity])

    def _who(self, tensor: TensorMap, kind: str, offsets: np.ndarray) -> str:
        _, program, _ = self.touches(tensor, kind).at(offsets)
        programs = sorted({int(p) for p in program if p >= 0})
        if not programs:
            return ""
        if len(programs) == 1:
            return f" ({self.program_label(programs[0])})"
        return f" ({len(programs)} programs)"

    def _tensor_findings(self, tensor: TensorMap) -> list[Finding]:
        found = []
        name = tensor.name
        words = {"after": "past the end of", "before": "before the start of", "gaps": "in the gaps between the rows of"}
        for kind, verb in (("loads", "read"), ("stores", "wrote")):
            touched = self.touches(tensor, kind)
            region = tensor.regions(touched.offset)
            for code, where in ((3, "after"), (2, "before"), (1, "gaps")):
                hit = touched.offset[region == code]
                if len(hit):
                    found.append(Finding("loud", f"{verb} {_elements(len(hit))} {words[where]} `{name}`"
                                                 f"{self._who(tensor, kind, hit)}", name))
        offsets = tensor.element_offsets().reshape(-1)
        n = len(offsets)
        loads, _, load_programs = self.touches(tensor, "loads").at(offsets)
        stores, _, store_programs = self.touches(tensor, "stores").at(offsets)
        if tensor.role == "output":
            unwritten = int((stores == 0).sum())
            if unwritten:
                found.append(Finding("loud", f"left {unwritten} of {n} elements of `{name}` unwritten", name))
            elif n:
                found.append(Finding("ok", f"every element of `{name}` written", name))
        elif tensor.role == "input" and int((stores > 0).sum()):
            found.append(Finding("loud", f"wrote {_elements(int((stores > 0).sum()))} of the input `{name}`", name))
        for counts, programs, verb in ((loads, load_programs, "read"), (stores, store_programs, "wrote")):
            repeated = int((counts > 1).sum())
            if repeated:
                most = int(counts.max())
                by = int(programs.max())
                who = f", by up to {by} programs" if by > 1 else ", each by one program"
                every = "every element" if repeated == n else f"{repeated} of {n} elements"
                found.append(Finding("note", f"{verb} {every} of `{name}` more than once (up to {most} times{who})",
                                     name))
        if n and (tensor.role == "input" or (tensor.role == "argument" and not int((stores > 0).sum()))):
            unread = int((loads == 0).sum())
            if unread == n:
                found.append(Finding("note", f"never read `{name}`", name))
            elif unread:
                found.append(Finding("note", f"read {n - unread} of {n} elements of `{name}`; {unread} never read",
                                     name))
            elif not int((loads > 1).sum()):
                found.append(Finding("ok", f"every element of `{name}` read once", name))
        if tensor.fills:
            parts = ", ".join(f"{lanes} as {value}" for value, lanes in sorted(tensor.fills.items()))
            found.append(Finding("ok", f"masked-off lanes of loads from `{name}`: {parts} (the `other=` value; "
                                         "0 when none is given)", name))
        return found

    # ---- JSON

    def to_dict(self) -> dict:
        return {"format": FORMAT, "available": self.available, "reason": self.reason, "label": self.label,
                "launches": [{"kernel": launch["kernel"], "grid": list(launch.get("grid") or [])}
                             for launch in self.launches],
                "tensors": [t.to_dict() for t in self.tensors], "outside": dict(self.outside),
                "error": self.error, "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, data: dict) -> "AccessMap":
        if data.get("format") != FORMAT:
            raise ValueError(f"access map format {data.get('format')!r}, expected {FORMAT}")
        return cls(available=bool(data["available"]), reason=data.get("reason", ""), label=data.get("label", ""),
                   launches=[{"kernel": launch["kernel"], "grid": list(launch.get("grid") or [])}
                             for launch in data.get("launches", [])],
                   tensors=[TensorMap.from_dict(t) for t in data.get("tensors", [])],
                   outside={k: int(v) for k, v in data.get("outside", {}).items()},
                   error=data.get("error"), notes=list(data.get("notes", [])))


def _elements(count: int) -> str:
    return f"{count} element{'s' if count != 1 else ''}"


# --------------------------------------------------------------------------- recording


@dataclass
class _Watched:
    name: str
    role: str
    tensor: Any
    events: dict[str, list[tuple[int, np.ndarray, np.ndarray]]] = field(default_factory=dict)  # kind -> [(launch, programs, offsets)]
    fills: Counter = field(default_factory=Counter)

    def geometry(self) -> tuple[int, int, int, int, int]:
        """(storage start, storage bytes, view start, element size, span in elements)."""
        tensor = self.tensor
        storage = tensor.untyped_storage()
        start, extent, _ = hooks.tensor_range(tensor)
        item = int(tensor.element_size())
        return int(storage.data_ptr()), int(storage.nbytes()), start, item, extent // item if item else 0


class _Recorder:
    """A listener of `grader.learner.interpreter_hooks` that keeps, per watched tensor, every touched offset."""

    def __init__(self) -> None:
        self.watched: list[_Watched] = []
        self.launches: list[dict] = []
        self.outside = {"loads": 0, "stores": 0}
        self._host_shift: dict[int, int] = {}
        self._table: tuple[hooks.RangeTable, list[tuple[int, int]]] | None = None

    def watch(self, name: str, tensor, role: str) -> None:
        if tensor.numel() == 0:
            return
        self.watched.append(_Watched(name, role, tensor))
        self._table = None

    def _covered(self, tensor) -> bool:
        start, extent, _ = hooks.tensor_range(tensor)
        for entry in self.watched:
            base, nbytes, _, _, _ = entry.geometry()
            if base <= start and start + extent <= base + nbytes:
                return True
        return False

    # ---- called by the hooks

    def _begin_launch(self, kernel: str, arguments) -> None:
        self.launches.append({"kernel": kernel, "grid": None})
        for name, tensor in arguments:  # tensors the function made itself: watched under their argument name
            if hasattr(tensor, "untyped_storage") and tensor.numel() and not self._covered(tensor):
                taken = {w.name for w in self.watched}
                label = name if name not in taken else f"{name} ({kernel})"
                self.watch(label, tensor, "argument")
        self._host_shift = {}
        self._table = None

    def _set_host_arguments(self, arguments, host_shift) -> None:
        self._host_shift = dict(host_shift)
        self._table = None

    def _set_grid(self, grid) -> None:
        if self.launches and self.launches[-1]["grid"] is None:
            self.launches[-1]["grid"] = [int(g) for g in grid]

    def _lookup(self):
        """The watched buffers' range table in the interpreter's address space, and each view's
        (start, element size)."""
        if self._table is None:
            ranges, views = [], []
            for entry in self.watched:
                base, nbytes, start, item, _ = entry.geometry()
                shift = self._host_shift.get(hooks.storage_base(entry.tensor), 0)
                ranges.append((base + shift, nbytes))
                views.append((start + shift, item))
            self._table = (hooks.RangeTable(ranges), views)
        return self._table

    def _program(self, access: hooks.Access) -> int:
        if access.program is None:
            return 0
        x, y, z = (list(access.program) + [0, 0, 0])[:3]
        grid = (self.launches[-1]["grid"] if self.launches else None) or [1, 1, 1]
        return int(x) * grid[1] * grid[2] + int(y) * grid[2] + int(z)

    def _file(self, kind: str, addresses: np.ndarray, program: int, fills=None) -> np.ndarray:
        """Attribute addresses to watched tensors; returns the owner of each address."""
        table, views = self._lookup()
        owner = table.owner(addresses)
        launch = max(len(self.launches) - 1, 0)
        for index in np.unique(owner):
            if index < 0:
                continue
            chosen = owner == index
            start, item = views[index]
            offsets = (addresses[chosen].astype(np.int64) - np.int64(start)) // item
            entry = self.watched[index]
            entry.events.setdefault(kind, []).append((launch, program, offsets))
            if fills is not None:
                entry.fills.update(_fill_label(v) for v in np.asarray(fills)[chosen].tolist())
        return owner

    def _on_access(self, access: hooks.Access) -> None:
        if access.direction not in _DIRECTION_KIND:  # "atomic": already reported as a load and a store
            return
        kind = _DIRECTION_KIND[access.direction]
        program = self._program(access)
        addresses = access.active_addresses()
        if addresses.size:
            owner = self._file(kind, addresses, program)
            self.outside[kind] += int((owner < 0).sum())
        if kind == "loads" or kind == "stores":
            masked, fills = access.masked_lanes()
            if masked.size:
                self._file("masked", masked, program, fills if kind == "loads" else None)

    # ---- the result

    def tensor_maps(self) -> list[TensorMap]:
        maps = []
        for entry in self.watched:
            base, nbytes, start, item, span = entry.geometry()
            tensor = entry.tensor
            runs = {kind: _runs(entry.events.get(kind, [])) for kind in KINDS}
            maps.append(TensorMap(
                name=entry.name, role=entry.role, dtype=str(tensor.dtype).replace("torch.", ""), item_size=item,
                shape=tuple(int(s) for s in tensor.shape), strides=tuple(int(s) for s in tensor.stride()),
                guard_before=(start - base) // item, guard_after=(base + nbytes - start) // item - span,
                runs=runs, fills=dict(sorted(entry.fills.items()))))
        return maps


def _fill_label(value) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
    return str(value)


def _runs(events: list[tuple[int, int, np.ndarray]]) -> np.ndarray:
    """Run-length encode (launch, program, offset) touches: rows [launch, program, start, stop, count]."""
    if not events:
        return np.zeros((0, 5), dtype=np.int64)
    launch = np.concatenate([np.full(len(offsets), l, dtype=np.int64) for l, _, offsets in events])
    program = np.concatenate([np.full(len(offsets), p, dtype=np.int64) for _, p, offsets in events])
    offset = np.concatenate([offsets for _, _, offsets in events]).astype(np.int64)
    keys, count = np.unique(np.stack([launch, program, offset], axis=1), axis=0, return_counts=True)
    launch, program, offset = keys[:, 0], keys[:, 1], keys[:, 2]
    n = len(offset)
    new = np.ones(n, dtype=bool)
    new[1:] = ((launch[1:] != launch[:-1]) | (program[1:] != program[:-1]) | (offset[1:] != offset[:-1] + 1)
               | (count[1:] != count[:-1]))
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    return np.stack([launch[starts], program[starts], offset[starts], offset[ends - 1] + 1, count[starts]],
                    axis=1).astype(np.int64)


def record_access_map(fn: Callable, inputs: dict[str, Any], kwargs: dict[str, Any] | None = None, *,
                      learner_file: str | None = None, label: str = "") -> AccessMap:
    """Call ``fn(*inputs.values(), **kwargs)`` once and record what its kernels touched.

    Tensors in ``inputs`` and ``kwargs`` must already be views into guarded buffers
    (`grader.wire.guards.guard_input`): their buffers are watched whole, so touches of the guards
    are recorded too. Outputs ``fn`` allocates are guarded and watched as it allocates them
    (`grader.learner.call_watch.Watch`); the one it returns is named ``out``; a torch fill (``zeros_like``)
    is named like an allocation. Tensors torch computes and ``fn`` passes to a kernel are watched
    under the kernel argument's name. When ``fn`` raises,
    the map keeps what was touched before, and ``error`` says what happened in a sentence.
    """
    from grader.wire.failures import describe_exception
    from grader.learner.call_watch import Watch

    kwargs = dict(kwargs or {})
    interpreter, reason = hooks.hook_points("access map")
    if interpreter is None:
        return AccessMap(available=False, reason=reason, label=label)
    recorder = _Recorder()
    for name, value in list(inputs.items()) + list(kwargs.items()):
        if hasattr(value, "untyped_storage"):
            recorder.watch(name, value, "input")
    watch = Watch(on_allocate=lambda name, tensor: recorder.watch(name, tensor, "output"))
    result, error = None, None
    with hooks.listening(recorder, interpreter):
        try:
            with watch:
                result = fn(*inputs.values(), **kwargs)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # the learner's code may raise anything
            error = str(describe_exception(exc, learner_file))
    _name_returned_output(recorder, watch, result)
    notes = []
    if watch.result.computed:
        notes.append(f"torch computed part of the answer ({', '.join(dict.fromkeys(watch.result.computed))}): "
                     "what torch reads and writes is not in the map")
    filled = [fill for _, fill in watch.result.filled_outputs(result)]  # scratch buffers may be zeroed
    if filled:
        notes.append(f"torch filled the output before the kernel ran ({', '.join(dict.fromkeys(filled))}): "
                     "a whole extra pass over it that the map does not show")
    return AccessMap(label=label, launches=[{"kernel": l["kernel"], "grid": l["grid"] or []} for l in recorder.launches],
                     tensors=recorder.tensor_maps(), outside=dict(recorder.outside), error=error, notes=notes)


def _name_returned_output(recorder: _Recorder, watch, result) -> None:
    """Outputs are named in allocation order ("out", "allocation #2", ...): the returned one is `out`.

    A returned tensor the watch did not allocate (``torch.zeros_like``, a fill) was watched as a
    kernel argument, without guards: it is the output all the same."""
    returned = watch.result.output_for(result) if result is not None else None
    if returned is None:
        if hasattr(result, "untyped_storage") and not any(e.name == "out" for e in recorder.watched):
            base = result.untyped_storage().data_ptr()
            for entry in recorder.watched:
                if entry.role == "argument" and entry.tensor.untyped_storage().data_ptr() == base:
                    entry.name, entry.role = "out", "output"
                    break
        return
    outputs = [entry for entry in recorder.watched if entry.role == "output"]
    target = next((entry for entry in outputs if entry.tensor is returned.view), None)
    if target is None or target.name == "out":
        return
    for entry in outputs:
        if entry.name == "out":
            entry.name = "allocation #1"
    target.name = "out"
