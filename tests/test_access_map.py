"""Tests for the access map: recording (grader/learner/access_map.py over grader/learner/interpreter_hooks.py),
its data round trip, the cells both drawings share (grader/commands/access_layout.py), and the drawings.

Every expected number is worked out by hand from the kernel, the grid and the shapes."""

import os

os.environ["TRITON_INTERPRET"] = "1"  # must precede the first `import triton`

import io
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from rich.console import Console
from triton.runtime import interpreter

from grader import catalogue
from grader.commands import access_figure, access_terminal
from grader.wire import guards
from grader.commands.access_layout import program_grid, tensor_grids
from grader.learner.access_map import AccessMap, ShowCase, parse_size, record_access_map
from grader.learner import interpreter_fixes
from grader.learner.traffic import count_traffic

GUARD = guards.GUARD
interpreter_fixes.apply()  # as the grader does in the learner's process: the interpreter computes as a GPU


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, MASK_STORE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    if MASK_STORE:
        tl.store(out_ptr + offsets, x + y, mask=mask)
    else:
        tl.store(out_ptr + offsets, x + y)


@triton.jit
def rows_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    values = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
    tl.store(out_ptr + row * out_row_stride + cols, values, mask=mask)


@triton.jit
def blocks_kernel(k_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Program (i, j) reads blocks 0..i of k (a staircase) and writes block i of row j."""
    i = tl.program_id(0)
    j = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, (i + 1) * BLOCK, BLOCK):
        total += tl.load(k_ptr + j * n + start + offs)
    tl.store(out_ptr + j * n + i * BLOCK + offs, total)


def add(block=256, mask_store=True, grid_short=False):
    def fn(x, y):
        out = torch.empty_like(x)
        n = out.numel()
        programs = n // block if grid_short else triton.cdiv(n, block)
        add_kernel[(programs,)](x, y, out, n, BLOCK=block, MASK_STORE=mask_store)
        return out
    return fn


def rows(contiguous_rows=False):
    def fn(x):
        m, n = x.shape
        out = torch.empty((m, n), dtype=x.dtype)
        stride = n if contiguous_rows else x.stride(0)
        rows_kernel[(m,)](x, out, n, stride, out.stride(0), BLOCK=triton.next_power_of_2(n))
        return out
    return fn


def guarded(*tensors):
    return [guards.guard_input(f"t{i}", t).view for i, t in enumerate(tensors)]


def vectors(n=1000):
    return guarded(torch.randn(n), torch.randn(n))


# ------------------------------------------------------------------------------------------------
# Recording
# ------------------------------------------------------------------------------------------------


def test_vector_add_programs_and_masked_tail():
    x, y = vectors(1000)  # 4 programs of 256; the last has 1000 - 768 = 232 lanes of data, 24 masked
    amap = record_access_map(add(), {"x": x, "y": y}, label="n = 1000")
    assert [t.name for t in amap.tensors] == ["x", "y", "out"]
    assert [t.role for t in amap.tensors] == ["input", "input", "output"]
    assert amap.launches == [{"kernel": "add_kernel", "grid": [4, 1, 1]}]
    expected = [[0, p, 256 * p, min(256 * p + 256, 1000), 1] for p in range(4)]
    assert amap.tensor("x").runs["loads"].tolist() == expected
    assert amap.tensor("out").runs["stores"].tolist() == expected
    assert amap.tensor("x").runs["stores"].tolist() == []
    assert amap.tensor("x").runs["masked"].tolist() == [[0, 3, 1000, 1024, 1]]
    assert amap.tensor("x").fills == {"0.0": 24}
    assert amap.tensor("x").guard_before == GUARD and amap.tensor("x").guard_after == GUARD
    assert amap.outside == {"loads": 0, "stores": 0}
    assert amap.element_programs("out", "stores").tolist() == [i // 256 for i in range(1000)]
    assert (amap.element_counts("x", "loads") == 1).all()
    assert all(f.severity == "ok" for f in amap.findings())


def test_unmasked_store_lands_in_the_guard_after_the_output():
    x, y = vectors(1000)
    amap = record_access_map(add(mask_store=False), {"x": x, "y": y})
    assert amap.outside_elements("out", "stores") == {"gaps": 0, "before": 0, "after": 24}
    assert amap.outside_elements("x", "loads") == {"gaps": 0, "before": 0, "after": 0}
    loud = [f.text for f in amap.findings() if f.severity == "loud"]
    assert loud == ["wrote 24 elements past the end of `out` (program 3)"]


def test_grid_one_block_short_leaves_the_tail_unwritten():
    x, y = vectors(1000)
    amap = record_access_map(add(grid_short=True), {"x": x, "y": y})
    counts = amap.element_counts("out", "stores")
    assert (counts[:768] == 1).all() and (counts[768:] == 0).all()
    assert "left 232 of 1000 elements of `out` unwritten" in [f.text for f in amap.findings()]


def test_rows_with_gaps_read_as_contiguous_touch_the_gaps():
    x = torch.randn(4, 100)
    (strided,) = guarded(torch.empty(4, 130)[:, :100].copy_(x))
    assert strided.stride() == (130, 1)
    right = record_access_map(rows(), {"x": strided})
    assert right.outside_elements("x", "loads") == {"gaps": 0, "before": 0, "after": 0}
    wrong = record_access_map(rows(contiguous_rows=True), {"x": strided})
    # Row r is read from r * 100: rows 1-3 start inside row 0's gap (100-129) and the rows after;
    # elements read in gaps: row 1 reads 100..199 (gap 100..129: 30), row 2 200..299 (gap 230..259: 30),
    # row 3 300..399 (gap 360..389: 30) -> 90.
    assert wrong.outside_elements("x", "loads") == {"gaps": 90, "before": 0, "after": 0}
    assert wrong.tensor("x").span == 3 * 130 + 100


def test_json_round_trip_is_exact():
    x, y = vectors(300)
    amap = record_access_map(add(block=128, mask_store=False), {"x": x, "y": y}, label="n = 300")
    data = json.loads(json.dumps(amap.to_dict()))
    back = AccessMap.from_dict(data)
    assert back.to_dict() == amap.to_dict()
    assert back.findings() == amap.findings()
    assert back.tensor("out").runs["stores"].dtype == np.int64
    with pytest.raises(ValueError, match="format"):
        AccessMap.from_dict({**data, "format": 99})


def test_two_dimensional_grid_and_program_labels():
    n, block = 128, 32
    (k,) = guarded(torch.randn(2, n))

    def fn(k):
        out = torch.empty_like(k)
        blocks_kernel[(n // block, 2)](k, out, n, BLOCK=block)
        return out

    amap = record_access_map(fn, {"k": k})
    assert amap.error is None
    assert amap.launches[0]["grid"] == [4, 2, 1] and amap.program_count == 8
    # program (i, j) is number i * 2 + j, in the order the interpreter runs them
    assert amap.program_label(3) == "program (1, 1)"
    programs = amap.element_programs("out", "stores")
    assert programs[1, 32:64].tolist() == [3] * 32
    # k's element (j, c) is read by programs i >= c // 32 of row j: 4 - c // 32 times
    counts = amap.element_counts("k", "loads")
    assert counts[0].tolist() == [4 - c // 32 for c in range(n)]
    grid = program_grid(amap, amap.tensor("k"), "loads")
    assert grid is not None and grid.labels[:2] == ["(0, 0)", "(0, 1)"]
    touched = [[cell.state != "untouched" for cell in row] for row in grid.rows]
    per_block = len(touched[0]) // 4
    for row, label in zip(touched, grid.labels):
        i = int(label.strip("()").split(",")[0])
        assert sum(row) == (i + 1) * per_block  # the staircase


def test_a_raising_function_keeps_what_was_touched_and_says_why():
    x, y = vectors(512)

    def fn(x, y):
        out = add(block=256)(x, y)
        raise ValueError("after the launch")

    amap = record_access_map(fn, {"x": x, "y": y})
    assert amap.error == "your code raised ValueError: after the launch"
    assert (amap.element_counts("out", "stores") == 1).all()


def test_tensors_the_function_makes_are_watched_under_their_argument_name():
    x, y = vectors(256)

    def fn(x, y):
        total = x + y  # torch computes the answer; the kernel only copies it
        out = torch.empty_like(x)
        add_kernel[(1,)](total, torch.zeros_like(total), out, 256, BLOCK=256, MASK_STORE=True)
        return out

    amap = record_access_map(fn, {"x": x, "y": y})
    # `zeros_like` is a fill: announced like an allocation ("allocation #2", after `out`) so that
    # the traffic counter sees it; `x + y` is torch's own result, watched under the argument's name.
    assert [t.name for t in amap.tensors] == ["x", "y", "out", "allocation #2", "x_ptr"]
    assert amap.tensor("x_ptr").role == "argument"
    assert amap.tensor("allocation #2").role == "output"
    assert (amap.element_counts("x", "loads") == 0).all()
    assert any("torch computed" in note for note in amap.notes)


def test_access_map_and_traffic_share_one_hook_layer():
    x, y = vectors(1000)
    before = (interpreter._interpreter, vars(interpreter.GridExecutor).get("__call__"))
    with count_traffic() as counter:
        counter.watch("x", x)
        amap = record_access_map(add(), {"x": x, "y": y})
        assert interpreter._interpreter is not before[0]  # still the counter's hooks
    assert (interpreter._interpreter, vars(interpreter.GridExecutor).get("__call__")) == before
    assert counter.loaded_bytes("x") == 1000 * 4
    assert int(amap.element_counts("x", "loads").sum()) == 1000


def test_host_copies_at_other_addresses_are_mapped_back(monkeypatch):
    """GPU tensors run on host copies of their whole storage in the interpreter: imitate that by
    copying every argument's storage to other memory (guards included, as the interpreter does)."""
    original = interpreter.GridExecutor._init_args_hst

    def elsewhere(a):
        if not isinstance(a, torch.Tensor):
            return a
        copy = a.new_empty(0)
        copy.set_(a.untyped_storage().clone(), a.storage_offset(), a.size(), a.stride())
        return copy

    def copy_to_other_host_memory(self, args_dev, kwargs):
        args_host, kwargs_host = original(self, args_dev, kwargs)
        return [elsewhere(a) for a in args_host], kwargs_host

    monkeypatch.setattr(interpreter.GridExecutor, "_init_args_hst", copy_to_other_host_memory)
    x, y = vectors(300)
    amap = record_access_map(add(block=128, mask_store=False), {"x": x, "y": y})
    assert amap.outside == {"loads": 0, "stores": 0}
    assert amap.outside_elements("out", "stores")["after"] == 84  # 3 * 128 - 300, in the copy's guard
    assert amap.element_programs("out", "stores").tolist() == [i // 128 for i in range(300)]
    assert amap.tensor("x").runs["masked"].tolist() == [[0, 2, 300, 384, 1]]


def test_unavailable_when_the_hook_point_is_missing(monkeypatch):
    monkeypatch.setattr(interpreter, "_interpreter", object())
    amap = record_access_map(add(), dict(zip("xy", vectors(16))))
    major_minor = ".".join(triton.__version__.split(".")[:2])
    assert not amap.available and amap.reason == f"access map: not available on Triton {major_minor}"
    assert AccessMap.from_dict(json.loads(json.dumps(amap.to_dict()))).reason == amap.reason


def test_parse_size():
    assert parse_size(None, (5, 781, 1000), ("M", "N", "S"), "5,781,1000") == (5, 781, 1000)
    assert parse_size("3", (5, 781, 1000), ("M", "N", "S"), "") == (3, 781, 1000)
    assert parse_size("4x300", (5, 781, 1000), ("M", "N", "S"), "") == (4, 300, 1000)
    for bad in ("0", "a,b", "1,2,3,4", "-3"):
        with pytest.raises(ValueError, match="--size takes M, N, S"):
            parse_size(bad, (5, 781, 1000), ("M", "N", "S"), "5,781,1000")


@pytest.mark.parametrize("exercise", [e for e in catalogue.EXERCISES if "\ndef show_inputs(" in e.spec_file.read_text()],
                         ids=lambda e: e.stem)
def test_every_exercise_with_tensors_chooses_a_show_input(exercise):
    import importlib

    spec = importlib.import_module(exercise.spec_module)
    case = spec.show_inputs(None)
    assert isinstance(case, ShowCase) and case.label
    tensors = [v for v in list(case.inputs.values()) + list(case.kwargs.values()) if isinstance(v, torch.Tensor)]
    assert tensors and all(t.device.type == "cpu" for t in tensors)
    assert sum(t.numel() for t in tensors) < 200_000  # a picture, not a benchmark
    with pytest.raises(ValueError, match="--size"):
        spec.show_inputs("0")


def test_softmax_show_input_has_gaps_between_rows_of_odd_width():
    from grader.exercises.ex03_softmax import spec as ex03_softmax

    x = ex03_softmax.show_inputs(None).inputs["x"]
    assert x.shape == (5, 781) and x.stride() == (1000, 1)
    assert ex03_softmax.show_inputs("2,100").inputs["x"].stride() == (1000, 1)
    with pytest.raises(ValueError, match="row stride"):
        ex03_softmax.show_inputs("2,100,50")


# ------------------------------------------------------------------------------------------------
# Cells
# ------------------------------------------------------------------------------------------------


def test_flat_layout_wraps_and_shows_the_guard_only_where_touched():
    x, y = vectors(1000)
    amap = record_access_map(add(mask_store=False), {"x": x, "y": y})
    (grid,) = tensor_grids(amap, amap.tensor("out"))
    assert grid.kind == "stores" and grid.scale == "1 cell = 4 elements"
    assert grid.labels == ["0", "256", "512", "768"]  # 1024 elements: the written guard fits in row 768
    last = grid.rows[-1]
    assert [c.state for c in last[:58]] == ["once"] * 58  # 768 + 58 * 4 = 1000
    assert [c.state for c in last[58:]] == ["outside"] * 6  # 24 elements past the end, 4 per cell
    assert {c.program for c in last[58:]} == {3}
    (inputs,) = tensor_grids(amap, amap.tensor("x"))
    assert [c.state for c in inputs.rows[-1][58:]] == ["guard"] * 6


def test_row_layout_shows_each_row_and_its_gap():
    x = torch.randn(4, 100)
    (strided,) = guarded(torch.empty(4, 130)[:, :100].copy_(x))
    amap = record_access_map(rows(contiguous_rows=True), {"x": strided})
    (grid,) = tensor_grids(amap, amap.tensor("x"))
    assert grid.labels == ["row 0", "row 1", "row 2", "row 3"]
    per_cell = int(grid.scale.split("= ")[1].split()[0])
    data_cells = -(-100 // per_cell)
    row0 = grid.rows[0]
    assert all(c.state == "once" and c.program == 0 for c in row0[:data_cells])
    assert any(c.state == "outside" for c in row0[data_cells:])  # program 1 read row 0's gap
    assert all(c.state in ("guard", "outside") for c in grid.rows[3][data_cells:])  # past the end: guard
    (out,) = tensor_grids(amap, amap.tensor("out"))
    assert all(c.state == "once" for row in out.rows for c in row)


def test_unwritten_output_cells_are_marked():
    x, y = vectors(1000)
    amap = record_access_map(add(grid_short=True), {"x": x, "y": y})
    (grid,) = tensor_grids(amap, amap.tensor("out"))
    states = [c.state for row in grid.rows for c in row]
    assert states.count("unwritten") == 58  # elements 768..999, 4 per cell
    assert program_grid(amap, amap.tensor("x"), "loads") is None  # no element read by two programs


# ------------------------------------------------------------------------------------------------
# Drawings
# ------------------------------------------------------------------------------------------------


def _terminal(amap) -> str:
    buffer = io.StringIO()
    access_terminal.render(amap, Console(file=buffer, width=80, color_system=None), title="test")
    return buffer.getvalue()


def test_terminal_fits_80_columns_and_says_what_it_shows():
    x = torch.randn(4, 100)
    (strided,) = guarded(torch.empty(4, 130)[:, :100].copy_(x))
    amap = record_access_map(rows(contiguous_rows=True), {"x": strided})
    text = _terminal(amap)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "read 90 elements in the gaps between the rows of `x`" in text
    assert "legend" in text and "touched outside the tensor" in text
    assert "row 1 " in text and "!" in text


def test_terminal_glyphs_name_programs_and_counts():
    x, y = vectors(1000)
    amap = record_access_map(add(), {"x": x, "y": y})
    lines = _terminal(amap).splitlines()
    row = next(line for line in lines if line.strip().startswith("768 "))
    assert row.split()[1] == "d" * 58 + "=" * 6  # program 3 is "d"; the guard after the end


def test_figure_svg_is_deterministic_and_png_is_written(tmp_path):
    x, y = vectors(1000)
    amap = record_access_map(add(mask_store=False), {"x": x, "y": y})
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    access_figure.save(amap, first, title="test")
    access_figure.save(AccessMap.from_dict(amap.to_dict()), second, title="test")
    assert first.read_bytes() == second.read_bytes()
    assert ET.parse(first).getroot().tag.endswith("svg")
    assert "wrote 24 elements past the end of `out`" in first.read_text()
    png = access_figure.save(amap, tmp_path / "map.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="png or .svg"):
        access_figure.save(amap, tmp_path / "map.pdf")
