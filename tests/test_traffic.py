"""Tests for grader/learner/traffic.py: byte counts worked out by hand from shapes and dtypes."""

import os

os.environ["TRITON_INTERPRET"] = "1"  # must precede the first `import triton`

import json

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

from grader.learner.traffic import OUTSIDE, Traffic, count_traffic, describe, format_bytes, traffic_available

F32, F16 = 4, 2  # bytes per element


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def read_twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    first = tl.load(x_ptr + offsets, mask=mask)
    second = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, first * second, mask=mask)


@triton.jit
def copy_rows_kernel(x_ptr, out_ptr, rows, cols, x_row_stride, BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
    r = tl.arange(0, BLOCK_ROWS)[:, None]
    c = tl.arange(0, BLOCK_COLS)[None, :]
    mask = (r < rows) & (c < cols)
    tile = tl.load(x_ptr + r * x_row_stride + c, mask=mask)
    tl.store(out_ptr + r * cols + c, tile, mask=mask)


@triton.jit
def unmasked_copy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets))


@triton.jit
def atomic_add_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.atomic_add(total_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def block_ptr_copy_kernel(x_ptr, out_ptr, rows, cols, BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
    source = tl.make_block_ptr(x_ptr, shape=(rows, cols), strides=(cols, 1), offsets=(0, 0),
                               block_shape=(BLOCK_ROWS, BLOCK_COLS), order=(1, 0))
    target = tl.make_block_ptr(out_ptr, shape=(rows, cols), strides=(cols, 1), offsets=(0, 0),
                               block_shape=(BLOCK_ROWS, BLOCK_COLS), order=(1, 0))
    tl.store(target, tl.load(source, boundary_check=(0, 1)), boundary_check=(0, 1))


@triton.jit
def descriptor_copy_kernel(x_ptr, out_ptr, rows, cols: tl.constexpr, BLOCK_ROWS: tl.constexpr):
    source = tl.make_tensor_descriptor(x_ptr, shape=[rows, cols], strides=[cols, 1], block_shape=[BLOCK_ROWS, cols])
    target = tl.make_tensor_descriptor(out_ptr, shape=[rows, cols], strides=[cols, 1], block_shape=[BLOCK_ROWS, cols])
    target.store([0, 0], source.load([0, 0]))


def run_add(n, block=256):
    x, y = torch.randn(n), torch.randn(n)
    out = torch.empty(n)
    add_kernel[(triton.cdiv(n, block), )](x, y, out, n, BLOCK=block)
    return x, y, out


def hooked_attributes():
    """The attributes count_traffic may replace, as they are right now."""
    return (interpreter._interpreter, vars(interpreter.GridExecutor).get("__call__"),
            vars(interpreter.GridExecutor).get("_init_args_hst"),
            vars(interpreter.interpreter_builder).get("set_grid_dim"))


def test_available_on_this_triton():
    assert traffic_available() == (True, "")
    with count_traffic() as counter:
        assert isinstance(counter, Traffic)
        assert counter.available and counter.reason == ""


def test_vector_add_counts_only_unmasked_lanes():
    n, block = 1000, 256  # 4 programs; the last has 1024 - 1000 = 24 masked-out lanes
    x, y = torch.randn(n), torch.randn(n)
    out = torch.empty(n)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("y", y)
        counter.watch("out", out)
        add_kernel[(triton.cdiv(n, block), )](x, y, out, n, BLOCK=block)
    torch.testing.assert_close(out, x + y)
    assert counter.loaded_bytes("x") == n * F32
    assert counter.loaded_bytes("y") == n * F32
    assert counter.stored_bytes("out") == n * F32
    assert counter.loaded_bytes("out") == counter.stored_bytes("x") == 0
    assert counter.total_loaded == 2 * n * F32
    assert counter.total_stored == n * F32
    assert counter.loaded_bytes(OUTSIDE) == counter.stored_bytes(OUTSIDE) == 0
    assert counter.passes("x") == 1.0
    assert counter.launches == [{"kernel": "add_kernel", "grid": (4, 1, 1)}]
    args = counter.arguments["add_kernel"]
    assert args["x_ptr"] == {"loaded": n * F32, "stored": 0}
    assert args["out_ptr"] == {"loaded": 0, "stored": n * F32}
    assert OUTSIDE not in args


def test_reading_the_input_twice_is_two_passes():
    n, block = 300, 128
    x, out = torch.randn(n), torch.empty(n)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        read_twice_kernel[(triton.cdiv(n, block), )](x, out, n, BLOCK=block)
    assert counter.loaded_bytes("x") == 2 * n * F32
    assert counter.passes("x") == 2.0
    assert counter.stored_bytes("out") == n * F32
    sentence = describe(counter, minimum_bytes=2 * n * F32)
    assert f"read `x` 2.00 times (2 × {format_bytes(n * F32)}; the minimum is one read)" in sentence
    assert "wrote `out` once" in sentence
    assert sentence.endswith(f"{format_bytes(3 * n * F32)} moved, 1.50× the minimum of {format_bytes(2 * n * F32)}")


def test_strided_rows_count_only_touched_bytes():
    rows, cols, row_stride = 6, 20, 48
    base = torch.randn(rows, row_stride)
    x = base[:, :cols]  # a strided view: the 28 floats after each row are never touched
    out = torch.empty(rows, cols)
    with count_traffic() as counter:
        counter.watch("base", base)
        counter.watch("x", x)  # inside base: the smaller range wins
        counter.watch("out", out)
        copy_rows_kernel[(1, )](x, out, rows, cols, x.stride(0), BLOCK_ROWS=8, BLOCK_COLS=32)
    torch.testing.assert_close(out, x)
    assert counter.loaded_bytes("x") == rows * cols * F32
    assert counter.loaded_bytes("base") == 0
    assert counter.passes("x") == 1.0
    assert counter.stored_bytes("out") == rows * cols * F32
    assert counter.as_dict()["tensors"]["x"]["size"] == rows * cols * F32


@pytest.mark.parametrize("dtype, item_bytes", [(torch.float16, F16), (torch.float32, F32)])
def test_element_size_follows_dtype(dtype, item_bytes):
    n = 200
    x = torch.randn(n).to(dtype)
    out = torch.empty(n, dtype=dtype)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        read_twice_kernel[(1, )](x, out, n, BLOCK=256)
    assert counter.loaded_bytes("x") == 2 * n * item_bytes
    assert counter.stored_bytes("out") == n * item_bytes


def test_unmasked_read_past_the_end_lands_outside():
    n, block = 100, 128
    buffer = torch.randn(block)  # the guard region behind x is real memory, so the read is safe
    x = buffer[:n]
    out = torch.empty(block)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        unmasked_copy_kernel[(1, )](x, out, BLOCK=block)
    assert counter.loaded_bytes("x") == n * F32
    assert counter.loaded_bytes(OUTSIDE) == (block - n) * F32
    assert counter.stored_bytes("out") == block * F32
    assert counter.as_dict()["tensors"][OUTSIDE]["loaded"] == (block - n) * F32
    assert "outside every watched tensor" in describe(counter, minimum_bytes=2 * n * F32)


def test_bytes_outside_every_tensor_are_named_by_the_edge_they_lie_beside():
    """As the grader lays tensors out (each inside a guard of its own): a read past the end of `x` is
    attributed to `x`'s end, not to the tensor whose guard starts further on."""
    n, block = 100, 128
    buffer = torch.randn(4 * block)
    x, out = buffer[block:block + n], buffer[3 * block:]
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        unmasked_copy_kernel[(1, )](x, out, BLOCK=block)
    assert counter.as_dict()["outside_near"] == [{"tensor": "x", "where": "past", "loaded": (block - n) * F32}]
    with count_traffic() as counter:  # a negative offset: the lanes before `x`'s first element
        counter.watch("x", buffer[block + 28:block + 28 + n])
        counter.watch("out", out)
        unmasked_copy_kernel[(1, )](buffer[block:block + n], out, BLOCK=block)
    assert {(e["tensor"], e["where"]) for e in counter.as_dict()["outside_near"]} == {("x", "before")}


def test_launches_accumulate_across_two_launches():
    with count_traffic() as counter:
        x, _, _ = run_add(1000)
        counter.watch("x", x)
        x2, _, _ = run_add(300, block=128)
    assert counter.launches == [
        {"kernel": "add_kernel", "grid": (4, 1, 1)},
        {"kernel": "add_kernel", "grid": (3, 1, 1)},
    ]
    assert counter.total_loaded == 2 * (1000 + 300) * F32
    assert counter.total_stored == (1000 + 300) * F32
    # x was watched after its launch: only traffic seen while watched is attributed to it
    assert counter.loaded_bytes("x") == 0
    data = json.loads(json.dumps(counter.as_dict()))
    assert data["launches"][1] == {"kernel": "add_kernel", "grid": [3, 1, 1]}
    assert data["loaded"] == counter.total_loaded and data["available"] is True


def test_hooks_are_removed_after_the_block():
    before = hooked_attributes()
    with count_traffic() as counter:
        assert hooked_attributes()[0] is not before[0]
        run_add(500)
    assert hooked_attributes() == before
    counted = (counter.total_loaded, counter.total_stored, len(counter.launches))
    run_add(500)
    assert (counter.total_loaded, counter.total_stored, len(counter.launches)) == counted == (
        2 * 500 * F32, 500 * F32, 1)


def test_hooks_are_removed_after_an_exception():
    before = hooked_attributes()
    with pytest.raises(RuntimeError, match="boom"):
        with count_traffic() as counter:
            run_add(256)
            raise RuntimeError("boom")
    assert hooked_attributes() == before
    assert counter.total_stored == 256 * F32
    run_add(256)
    assert len(counter.launches) == 1


def test_nested_blocks_both_count():
    before = hooked_attributes()
    with count_traffic() as outer:
        run_add(256)
        with count_traffic() as inner:
            run_add(512)
    assert hooked_attributes() == before
    assert inner.total_stored == 512 * F32
    assert outer.total_stored == (256 + 512) * F32


def test_atomics_count_as_a_load_and_a_store():
    n, block = 100, 128
    x, total = torch.randn(n), torch.zeros(block)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("total", total)
        atomic_add_kernel[(1, )](x, total, n, BLOCK=block)
    torch.testing.assert_close(total[:n], x)
    assert counter.loaded_bytes("x") == n * F32
    assert counter.loaded_bytes("total") == counter.stored_bytes("total") == n * F32
    # ... and are tallied as atomics, by tensor and by kernel (exercise 9 names them in dweight).
    assert counter.atomic_bytes("total") == n * F32 and counter.atomic_bytes("x") == 0
    record = counter.as_dict()
    assert record["atomics"] == {"atomic_add_kernel": n * F32}
    assert record["tensors"]["total"]["atomic"] == n * F32 and "atomic" not in record["tensors"]["x"]


def test_block_pointer_padding_is_not_counted():
    rows, cols = 10, 12  # a 16 x 16 block: boundary_check masks 256 - 120 lanes
    x, out = torch.randn(rows, cols), torch.zeros(rows, cols)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        try:
            block_ptr_copy_kernel[(1, )](x, out, rows, cols, BLOCK_ROWS=16, BLOCK_COLS=16)
        except Exception as error:  # Triton >= 3.7 removed block pointers
            if "removed" in str(error) or "NotImplementedError" in str(error):
                pytest.skip("this Triton has no block pointers")
            raise
    torch.testing.assert_close(out, x)
    assert counter.loaded_bytes("x") == rows * cols * F32
    assert counter.stored_bytes("out") == rows * cols * F32
    assert counter.loaded_bytes(OUTSIDE) == counter.stored_bytes(OUTSIDE) == 0


def test_tensor_descriptor_padding_is_not_counted():
    rows, cols = 10, 8  # a 16-row block over 10 rows: 6 padded rows are not read
    x, out = torch.randn(rows, cols), torch.zeros(rows, cols)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        descriptor_copy_kernel[(1, )](x, out, rows, cols, BLOCK_ROWS=16)
    torch.testing.assert_close(out, x)
    assert counter.loaded_bytes("x") == rows * cols * F32
    assert counter.stored_bytes("out") == rows * cols * F32


def test_unavailable_when_the_hook_point_is_missing(monkeypatch):
    monkeypatch.setattr(interpreter, "_interpreter", object())  # no load/store to wrap
    available, reason = traffic_available()
    assert not available
    major_minor = ".".join(triton.__version__.split(".")[:2])
    assert reason == f"traffic: not available on Triton {major_minor}"
    with count_traffic() as counter:
        counter.watch("x", torch.zeros(4))
        assert interpreter.GridExecutor.__call__ is vars(interpreter.GridExecutor)["__call__"]
    assert not counter.available and counter.reason == reason
    assert counter.loaded_bytes("x") == 0 and counter.launches == []
    assert describe(counter, 16) == reason


def test_unknown_name_is_an_error():
    with count_traffic() as counter:
        counter.watch("x", torch.zeros(4))
    with pytest.raises(KeyError, match="not watched"):
        counter.loaded_bytes("y")


def test_format_bytes():
    assert format_bytes(17) == "17 B"
    assert format_bytes(3 * 1024) == "3.0 KiB"
    assert format_bytes(64 * 1024) == "64.0 KiB"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(64 * 2**20) == "64 MiB"
    assert format_bytes(3 * 2**29) == "1.5 GiB"


@triton.jit
def scalar_and_cas_kernel(flag_ptr, x_ptr, out_ptr):
    tl.atomic_cas(flag_ptr, 0, 1)  # one int32 lane: one load and one store
    tl.store(out_ptr, tl.load(x_ptr) + 1.0)  # scalar pointers: one float32 each way


def test_scalar_accesses_and_compare_and_swap():
    flag, x, out = torch.zeros(1, dtype=torch.int32), torch.ones(1), torch.zeros(1)
    with count_traffic() as counter:
        for name, tensor in (("flag", flag), ("x", x), ("out", out)):
            counter.watch(name, tensor)
        scalar_and_cas_kernel[(1, )](flag, x, out)
    assert flag.item() == 1 and out.item() == 2.0
    assert counter.loaded_bytes("flag") == counter.stored_bytes("flag") == 4
    assert counter.loaded_bytes("x") == counter.stored_bytes("out") == F32


def test_host_copies_at_other_addresses_are_mapped_back(monkeypatch):
    """With GPU tensors the interpreter runs on host copies at other addresses;
    imitate that by cloning every tensor argument, and check attribution survives."""
    original = interpreter.GridExecutor._init_args_hst

    def copy_to_other_host_memory(self, args_dev, kwargs):
        args_host, kwargs_host = original(self, args_dev, kwargs)
        return [a.clone() if isinstance(a, torch.Tensor) else a for a in args_host], kwargs_host

    monkeypatch.setattr(interpreter.GridExecutor, "_init_args_hst", copy_to_other_host_memory)
    n = 300
    x, y, out = torch.randn(n), torch.randn(n), torch.empty(n)
    with count_traffic() as counter:
        counter.watch("x", x)
        counter.watch("out", out)
        add_kernel[(triton.cdiv(n, 128), )](x, y, out, n, BLOCK=128)
    torch.testing.assert_close(out, x + y)
    assert counter.loaded_bytes("x") == n * F32
    assert counter.stored_bytes("out") == n * F32
    assert counter.loaded_bytes(OUTSIDE) == n * F32  # y was not watched
    assert counter.arguments["add_kernel"]["y_ptr"]["loaded"] == n * F32


def test_unavailable_when_the_interpreter_is_off(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    available, reason = traffic_available()
    assert not available and "TRITON_INTERPRET=1" in reason
