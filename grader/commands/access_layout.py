"""An access map as rows of cells: what the terminal and the figure both draw.

`tensor_grids(amap, tensor)` lays one tensor out for each kind of access it had (loads of an
input, stores of an output; both when both happened):

* a 1-D tensor wraps into rows of ``width`` cells;
* a 2-D tensor with unit column stride shows one row per tensor row, and the gap between rows
  (row stride minus row length) as extra cells after each row's elements;
* a tensor of 3 or more dimensions shows one row per index of its leading dimensions (say
  ``[b, h]``) and one cell per position along its second-to-last dimension, the last one
  (a head dimension) folded into the cell.

Where a tensor is larger than the screen, one cell covers several elements (``Grid.scale``).
The memory around a tensor - the guard regions before and after it - shows where anything
touched it: as the rest of the last row, and as extra rows (at most `EXTRA_ROWS` each side).

`program_grid(amap, tensor, kind)` draws, for a tensor that several programs touched (the keys
of attention, a bias every row re-reads), one row per program and one cell per position:
which program touched which part. For causal attention it is the staircase of key blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from grader.learner.access_map import AccessMap, TensorMap

__all__ = ["EXTRA_ROWS", "STATES", "Cell", "Grid", "program_grid", "tensor_grids"]

#: What a cell can show, from the loudest down.
STATES = ("outside", "unwritten", "repeated", "once", "untouched", "gap", "guard")
#: Rows of guard memory drawn at most before and after a tensor.
EXTRA_ROWS = 3
_ELEMENT, _GAP, _BEFORE, _AFTER = 0, 1, 2, 3


@dataclass(frozen=True)
class Cell:
    state: str  # one of STATES
    program: int = -1  # the first program (global index) that touched it, -1: none
    count: int = 0  # most touches of one element in the cell


@dataclass
class Grid:
    title: str
    kind: str  # "loads" or "stores"
    labels: list[str]
    rows: list[list[Cell]]
    scale: str = ""  # "1 cell = 4 elements", or ""
    columns: str = ""  # what the columns are, when not plain elements
    more: str = ""  # touched memory beyond the rows drawn, in words


def _nice(value: float) -> int:
    """The smallest power of two >= value (>= 1): cells cover round numbers of elements."""
    return 1 << max(0, math.ceil(math.log2(max(value, 1))))


def _elements(count: int) -> str:
    return f"{count} element{'s' if count != 1 else ''}"


class _Cells:
    """Turns sets of offsets into cells for one tensor and one kind."""

    def __init__(self, amap: AccessMap, tensor: TensorMap, kind: str):
        self.tensor = tensor
        self.kind = kind
        self.touches = amap.touches(tensor, kind)
        self.elements = np.unique(tensor.element_offsets())
        self.span = tensor.span
        self.writes = kind == "stores" and tensor.role == "output"

    def region(self, offsets: np.ndarray) -> np.ndarray:
        region = np.where(np.isin(offsets, self.elements), _ELEMENT, _GAP)
        region = np.where(offsets < 0, _BEFORE, region)
        return np.where(offsets >= self.span, _AFTER, region)

    def cell(self, offsets: np.ndarray, region: np.ndarray | None = None) -> Cell:
        offsets = np.asarray(offsets, dtype=np.int64)
        if region is None:
            region = self.region(offsets)
        count, program, _ = self.touches.at(offsets)
        element = region == _ELEMENT
        hit_outside = (~element) & (count > 0)
        if hit_outside.any():
            return Cell("outside", int(program[hit_outside][0]), int(count[hit_outside].max()))
        if element.any():
            counts, programs = count[element], program[element]
            touched = counts > 0
            first = int(programs[touched][0]) if touched.any() else -1
            most = int(counts.max())
            if self.writes and (~touched).any():
                return Cell("unwritten", first, most)
            if most > 1:
                return Cell("repeated", first, most)
            if touched.any():
                return Cell("once", first, most)
            return Cell("untouched")
        return Cell("gap") if (region == _GAP).any() else Cell("guard")

    def touched_outside(self) -> np.ndarray:
        """Touched offsets before the start or past the end (the guards), sorted."""
        offsets = self.touches.offset[self.touches.count > 0]
        return offsets[(offsets < 0) | (offsets >= self.span)]


def _kinds(amap: AccessMap, tensor: TensorMap) -> list[str]:
    has = {kind: len(tensor.kind_runs(kind)) > 0 for kind in ("loads", "stores")}
    if tensor.role == "output":
        return ["stores"] + (["loads"] if has["loads"] else [])
    if tensor.role == "input":
        return ["loads"] + (["stores"] if has["stores"] else [])
    return [kind for kind in ("loads", "stores") if has[kind]] or ["loads"]


def _title(tensor: TensorMap, kind: str) -> str:
    shape = "(" + ", ".join(str(s) for s in tensor.shape) + ("," if len(tensor.shape) == 1 else "") + ")"
    strided = ""
    if len(tensor.shape) == 2 and tensor.strides[0] != tensor.shape[1]:
        strided = f", rows {tensor.strides[0]} apart"
    what = {"input": "input", "output": "output", "argument": "made by your function"}[tensor.role]
    verb = {"loads": "read", "stores": "written"}[kind]
    return f"{tensor.name}: {what} {shape} {tensor.dtype}{strided}, {verb}"


def tensor_grids(amap: AccessMap, tensor: TensorMap, *, width: int = 64, max_rows: int = 12) -> list[Grid]:
    """One grid per kind of access of ``tensor`` (see the module docstring)."""
    grids = []
    for kind in _kinds(amap, tensor):
        cells = _Cells(amap, tensor, kind)
        shape, strides = tensor.shape, tensor.strides
        if len(shape) <= 1:
            grid = _flat(cells, width, max(max_rows // 2, 1))
        elif len(shape) == 2 and strides[1] == 1 and strides[0] >= shape[1]:
            grid = _rows(cells, width, max_rows)
        else:
            grid = _lines(cells, width, max_rows)
        grid.title, grid.kind = _title(tensor, kind), kind
        grids.append(grid)
    return grids


def _extra(offsets: np.ndarray, first: int, last: int, row: int) -> tuple[int, int, int]:
    """Row indices (first, stop) to draw around rows [first, last) so that touched offsets
    outside show, at most EXTRA_ROWS each side; and how many touched offsets are left out."""
    lo, hi = first, last
    if len(offsets):
        lo = min(first, int(offsets.min()) // row)
        hi = max(last, int(offsets.max()) // row + 1)
    start, stop = max(lo, first - EXTRA_ROWS), min(hi, last + EXTRA_ROWS)
    left_out = int(((offsets < start * row) | (offsets >= stop * row)).sum()) if len(offsets) else 0
    return start, stop, left_out


def _more(left_out: int) -> str:
    return f"{_elements(left_out)} touched further out, not drawn" if left_out else ""


def _flat(cells: _Cells, width: int, max_rows: int) -> Grid:
    span = max(cells.span, 1)
    width = min(width, max(16, span))  # a tensor of a few elements: a short row, not a row of guard
    per_cell = _nice(span / (width * max_rows))
    row = width * per_cell
    data_rows = math.ceil(span / row)
    start, stop, left_out = _extra(cells.touched_outside(), 0, data_rows, row)
    labels, rows = [], []
    for r in range(start, stop):
        base = r * row
        labels.append(str(base))
        rows.append([cells.cell(np.arange(base + c * per_cell, base + (c + 1) * per_cell)) for c in range(width)])
    scale = f"1 cell = {per_cell} elements" if per_cell > 1 else ""
    return Grid("", "", labels, rows, scale=scale, more=_more(left_out))


def _rows(cells: _Cells, width: int, max_rows: int) -> Grid:
    tensor = cells.tensor
    m, n = tensor.shape
    stride = tensor.strides[0] if m > 1 else n
    gap = stride - n
    per_cell = _nice(stride / width)
    data_cells = math.ceil(n / per_cell)
    gap_per_cell = per_cell
    if gap and data_cells + math.ceil(gap / per_cell) > width:
        gap_per_cell = math.ceil(gap / max(width - data_cells, 1))
    gap_cells = math.ceil(gap / gap_per_cell) if gap else 0
    group = math.ceil(m / max_rows)
    display = math.ceil(m / group)
    touched = cells.touched_outside()
    # guard rows: whole row strides before the first row and after the last
    before = touched[touched < 0]
    after = touched[touched >= m * stride]
    extra_before = min(EXTRA_ROWS, math.ceil(-int(before.min()) / stride)) if len(before) else 0
    extra_after = min(EXTRA_ROWS, (int(after.max()) - m * stride) // stride + 1) if len(after) else 0
    drawn_lo, drawn_hi = -extra_before * stride, (m + extra_after) * stride
    left_out = int(((touched < drawn_lo) | (touched >= drawn_hi)).sum())

    def row_cells(row_starts: list[int]) -> list[Cell]:
        out = []
        for c in range(data_cells):
            cols = np.arange(c * per_cell, min((c + 1) * per_cell, n))
            out.append(cells.cell(np.concatenate([s + cols for s in row_starts])))
        for c in range(gap_cells):
            cols = np.arange(n + c * gap_per_cell, min(n + (c + 1) * gap_per_cell, stride))
            out.append(cells.cell(np.concatenate([s + cols for s in row_starts])))
        return out

    labels, rows = [], []
    for r in range(-extra_before, 0):
        labels.append("before")
        rows.append(row_cells([r * stride]))
    for d in range(display):
        first, last = d * group, min((d + 1) * group, m)
        labels.append(f"row {first}" if last - first == 1 else f"{first}-{last - 1}")
        rows.append(row_cells([r * stride for r in range(first, last)]))
    for r in range(m, m + extra_after):
        labels.append("after")
        rows.append(row_cells([r * stride]))
    scale = f"1 cell = {per_cell} elements" if per_cell > 1 else ""
    if group > 1:
        scale = f"1 row = {group} rows" + (f", 1 cell = {per_cell} columns" if per_cell > 1 else "")
    columns = ""
    if gap_cells:
        columns = (f"{data_cells} cells of columns 0-{n - 1}, then {gap_cells} of the gap before the next row "
                   f"(the last row's gap is the guard)")
    return Grid("", "", labels, rows, scale=scale, columns=columns, more=_more(left_out))


def _lines(cells: _Cells, width: int, max_rows: int) -> Grid:
    """Leading dimensions as rows, the second-to-last as columns, the last folded into cells."""
    tensor = cells.tensor
    offsets = tensor.element_offsets()
    if offsets.ndim == 2:
        offsets = offsets[:, :, None]
    lead = offsets.shape[:-2]
    positions, inner = offsets.shape[-2], offsets.shape[-1]
    lines = offsets.reshape(-1, positions, inner)
    per_cell = _nice(positions / width)
    columns = math.ceil(positions / per_cell)
    group = math.ceil(len(lines) / max_rows)
    labels, rows = [], []
    index = list(np.ndindex(*lead)) if lead else [()]
    for d in range(math.ceil(len(lines) / group)):
        first, last = d * group, min((d + 1) * group, len(lines))
        block = lines[first:last]
        labels.append(_index_label(index[first], tensor) if last - first == 1 else f"{first}-{last - 1}")
        rows.append([cells.cell(block[:, c * per_cell:(c + 1) * per_cell, :].reshape(-1), None)
                     for c in range(columns)])
    axis = "dimension -2" if tensor.shape else ""
    what = f"positions along {axis}" + (f", each with its {inner} elements along the last dimension" if inner > 1 else "")
    scale = f"1 cell = {per_cell} positions" if per_cell > 1 else ""
    if group > 1:
        scale = f"1 row = {group} rows" + (", " + scale if scale else "")
    outside = cells.touched_outside()
    more = f"{_elements(len(outside))} touched outside `{tensor.name}`, not drawn here" if len(outside) else ""
    return Grid("", "", labels, rows, scale=scale, columns=f"columns: {what}", more=more)


def _index_label(index: tuple, tensor: TensorMap) -> str:
    if len(tensor.shape) == 2:
        return f"row {index[0]}" if index else "row 0"
    return "[" + ",".join(str(i) for i in index) + "]"


# --------------------------------------------------------------------------- programs x positions


def _positions(tensor: TensorMap) -> tuple[np.ndarray, np.ndarray, int, str]:
    """(element offsets sorted, their position index, number of positions, what a position is)."""
    offsets = tensor.element_offsets()
    shape = tensor.shape
    if len(shape) <= 1:
        position = np.arange(offsets.size)
        count, what = max(offsets.size, 1), "elements"
    elif len(shape) == 2:
        position = np.broadcast_to(np.arange(shape[1]), shape).reshape(-1)
        count, what = shape[1], "columns"
    else:
        position = np.broadcast_to(np.arange(shape[-2])[:, None], shape).reshape(-1)
        count, what = shape[-2], "positions along dimension -2"
    flat = offsets.reshape(-1)
    order = np.argsort(flat, kind="stable")
    return flat[order], np.asarray(position)[order], count, what


def _short_label(amap: AccessMap, index: int) -> str:
    """"3" or "(1, 0)"; with several launches "#2 (1, 0)" (the launch's number, from 1)."""
    label = amap.program_label(index)
    if label.startswith("program "):
        return label.removeprefix("program ")
    kernel, _, where = label.partition(" ")
    number = next(i for i, launch in enumerate(amap.launches) if launch["kernel"] == kernel) + 1
    return f"#{number} {where}"


def program_grid(amap: AccessMap, tensor: TensorMap, kind: str, *, width: int = 64,
                 max_programs: int = 16) -> Grid | None:
    """Which program touched which positions of ``tensor`` (rows: programs), or None when no
    element was touched by more than one program (or the tensor is too small to need it)."""
    touches = amap.touches(tensor, kind)
    if tensor.numel < 16 or not len(touches.programs) or int(touches.programs.max()) < 2:
        return None
    runs = tensor.kind_runs(kind)
    sorted_offsets, sorted_positions, count, what = _positions(tensor)
    shape = tensor.shape
    per_cell = _nice(count / width)
    columns = math.ceil(count / per_cell)
    global_programs = amap.program_index(runs[:, 0], runs[:, 1])
    programs = sorted(set(int(p) for p in global_programs))
    shown = programs[:max_programs]
    table = {p: np.zeros(columns, dtype=np.int64) for p in shown}
    for (launch, program, start, stop, times), p in zip(runs.tolist(), global_programs.tolist()):
        if p not in table:
            continue
        offsets = np.arange(start, stop)
        where = np.searchsorted(sorted_offsets, offsets)
        where = np.clip(where, 0, len(sorted_offsets) - 1)
        hit = sorted_offsets[where] == offsets
        cols = sorted_positions[where[hit]] // per_cell
        np.maximum.at(table[p], cols, times)
    rows = [[Cell("repeated" if v > 1 else "once", p, int(v)) if v else Cell("untouched") for v in table[p]]
            for p in shown]
    labels = [_short_label(amap, p) for p in shown]
    verb = {"loads": "read", "stores": "wrote"}[kind]
    more = f"{len(programs) - len(shown)} more programs not drawn" if len(programs) > len(shown) else ""
    return Grid(f"{tensor.name}: what each program {verb}", kind, labels, rows,
                scale=f"1 cell = {per_cell} {what}" if per_cell > 1 else "",
                columns=f"one row per program; columns: {what}" + (", all rows together" if len(shape) > 1 else ""),
                more=more)
