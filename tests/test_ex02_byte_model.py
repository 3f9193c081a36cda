"""Exercise 2's byte model and the grader's diagnoses, checked without running a kernel.

The byte counts are worked out by hand; the diagnoses are fed outputs computed with torch the way
a kernel with one known mistake would compute them.
"""

from __future__ import annotations

import math

import pytest
import torch

from grader.wire import guards
from grader.exercises.ex02_bias_gelu import spec

F32, F16 = 4, 2


# --- the grader's byte model, by hand -------------------------------------------------------------

def test_fused_bytes_at_the_benchmark_shape():
    # 16384 x 4096 fp32: x and out are 256 MiB each, the bias 16 KiB.
    assert spec.minimum_bytes(16384, 4096, F32) == 2 * 268_435_456 + 16_384 == 536_887_296


def test_unfused_bytes_at_the_benchmark_shape():
    # x + bias: 256 MiB read, 16 KiB read, 256 MiB written; gelu: 256 MiB read, 256 MiB written.
    assert spec.unfused_bytes(16384, 4096, F32) == 4 * 268_435_456 + 16_384 == 1_073_758_208


def test_small_shapes_by_hand():
    assert spec.minimum_bytes(1, 1, F32) == 12  # x, bias, out: one float each
    assert spec.unfused_bytes(1, 1, F32) == 20  # x, bias, tmp written, tmp read, out
    assert spec.minimum_bytes(3, 5, F16) == (15 + 5 + 15) * 2
    assert spec.unfused_bytes(3, 5, F16) == (15 + 5 + 15 + 15 + 15) * 2


def test_unfused_to_fused_ratio_tends_to_two():
    assert spec.unfused_bytes(16384, 4096, F32) / spec.minimum_bytes(16384, 4096, F32) == pytest.approx(2.0, abs=1e-4)
    assert spec.unfused_bytes(1, 1, F32) / spec.minimum_bytes(1, 1, F32) == pytest.approx(5 / 3)


@pytest.mark.parametrize("m,n,size", [(16384, 4096, 4), (127, 4097, 2), (1, 1, 4), (4097, 3, 2)])
def test_solution_byte_model_agrees(m, n, size):
    from solutions import ex02_bias_gelu as solution

    assert solution.fused_bytes(m, n, size) == spec.minimum_bytes(m, n, size)
    assert solution.unfused_bytes(m, n, size) == spec.unfused_bytes(m, n, size)


def test_stub_byte_model_is_not_implemented():
    from exercises import ex02_bias_gelu as stub

    for fn in (stub.fused_bytes, stub.unfused_bytes):
        with pytest.raises(NotImplementedError, match="exercise 2"):
            fn(3, 5, 4)


# --- what a wrong byte model is told --------------------------------------------------------------

M, N, S = 16384, 4096, 4
MN = M * N


def test_right_counts_pass_including_integral_floats():
    assert spec.diagnose_byte_model("fused_bytes", M, N, S, spec.minimum_bytes(M, N, S)) is None
    assert spec.diagnose_byte_model("unfused_bytes", M, N, S, float(spec.unfused_bytes(M, N, S))) is None


@pytest.mark.parametrize("value,expected", [
    ((2 * MN + N) * S, "round trip of the intermediate x + bias"),
    ((3 * MN + N) * S, "only half the round trip"),
    (4 * MN + N, "elements, not bytes"),
    (4 * MN * S, "the bias is missing"),
    (5 * MN * S, "once per row"),
    (123, "x + bias reads x (M·N) and bias (N)"),
])
def test_unfused_mistakes_are_named(value, expected):
    message = spec.diagnose_byte_model("unfused_bytes", M, N, S, value)
    assert message is not None and expected in message
    assert f"{value:,}" in message and "1,073,758,208" in message


@pytest.mark.parametrize("value,expected", [
    (2 * MN + N, "elements, not bytes"),
    (2 * MN * S, "the bias is missing"),
    (3 * MN * S, "once per row"),
    ((3 * MN + N) * S, "keeps it in registers"),
    ((4 * MN + N) * S, "the unfused pair's count"),
])
def test_fused_mistakes_are_named(value, expected):
    message = spec.diagnose_byte_model("fused_bytes", M, N, S, value)
    assert message is not None and expected in message


def test_ambiguous_counts_get_the_general_sentence():
    # At 1 x 1, M·N = N: "bias missing" (4·1·4 = 16) and "half the round trip" ((3 + 1)·4 = 16)
    # give the same count; a count that two mistakes explain is not given either name.
    message = spec.diagnose_byte_model("unfused_bytes", 1, 1, 4, 16)
    assert message is not None
    assert "x + bias reads x (M·N) and bias (N)" in message


@pytest.mark.parametrize("value", ["12", None, 12.5, math.nan, True])
def test_values_that_are_not_byte_counts(value):
    message = spec.diagnose_byte_model("fused_bytes", 1, 1, 4, value)
    assert message is not None and "fused_bytes(1, 1, 4)" in message


# --- tolerances and diagnoses on outputs computed with torch -----------------------------------------

def _inputs(shape, dtype, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g) * scale).to(dtype)
    bias = (torch.randn(shape[1], generator=g) * scale).to(dtype)
    return x, bias


def _fp32_inside(x, bias, *, erf=True):
    """What a right kernel computes: widen, add and GELU in float32, round once."""
    z = x.float() + bias.float()
    if erf:
        y = 0.5 * z * (1 + torch.erf(z * 0.7071067811865476))
    else:
        y = 0.5 * z * (1 + torch.tanh(0.7978845608028654 * (z + 0.044715 * z * z * z)))
    return y.to(x.dtype)


DTYPES = [torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("scale", [1.0, 1000.0])
def test_float32_inside_is_within_tolerance(dtype, scale):
    x, bias = _inputs((64, 257), dtype, scale=scale)
    assert spec.diagnose(_fp32_inside(x, bias), x, bias, dtype) is None
    spec._expect(x, bias, dtype)(_fp32_inside(x, bias))  # raises GradeFailure if not


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tanh_is_named_in_every_dtype(dtype):
    x, bias = _inputs((16, 129), dtype)
    message = spec.diagnose(_fp32_inside(x, bias, erf=False), x, bias, dtype)
    assert message and "matches the tanh approximation of GELU, not the exact erf form" in message


def test_sigmoid_approximation_is_named():
    x, bias = _inputs((16, 129), torch.float16)
    z = x.float() + bias.float()
    quick = (z * torch.sigmoid(1.702 * z)).half()
    message = spec.diagnose(quick, x, bias, torch.float16)
    assert message and "sigmoid approximation of GELU" in message and "not the exact erf form" in message


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_bias_after_gelu_and_missing_bias(dtype):
    x, bias = _inputs((16, 129), dtype)
    after = (spec.gelu64(x.double()) + bias.double()).to(dtype)
    assert "looks like bias added after GELU" in spec.diagnose(after, x, bias, dtype)
    without = spec.gelu64(x.double()).to(dtype)
    assert "without the bias" in spec.diagnose(without, x, bias, dtype)


def test_bias_by_row():
    x, bias = _inputs((5, 64), torch.float32)
    by_row = spec.gelu64(x.double() + bias.double()[:5, None]).float()
    assert "indexed by the row instead of the column" in spec.diagnose(by_row, x, bias, torch.float32)


def test_bias_by_flat_offset_with_nan_beyond_the_bias():
    x, bias = _inputs((4, 33), torch.float32)
    out = _fp32_inside(x, bias)
    out[1:] = float("nan")  # rows >= 1 read the NaN guard past the end of bias
    assert "indexed by the flat offset instead of the column" in spec.diagnose(out, x, bias, torch.float32)


def test_rounded_to_half_before_gelu():
    x, bias = _inputs((16, 129), torch.float16, scale=30.0)
    rounded = spec.gelu64((x.float() + bias.float()).half().double()).half()
    message = spec.diagnose(rounded, x, bias, torch.float16)
    assert message and "rounded to float16 before the GELU" in message


def test_rows_stepped_by_n_on_a_strided_x():
    x, bias = _inputs((5, 7), torch.float32)
    wide = torch.full((5, 10), float("nan"))
    wide[:, :7] = x
    strided = wide[:, :7]
    flat = wide.reshape(-1)[: 5 * 7].reshape(5, 7)  # row r read from r * 7 of the buffer, gaps included
    out = spec.gelu64(flat.double() + bias.double()).float()
    message = spec.diagnose(out, strided, bias, torch.float32)
    assert message and "stepped by N = 7 instead of x.stride(0) = 10" in message


def test_unwritten_output_gets_no_diagnosis():
    x, bias = _inputs((4, 33), torch.float32)
    out = _fp32_inside(x, bias)
    guards.fill_poison(out[1:])  # rows the kernel never wrote: compare's "unwritten" says it better
    assert spec.diagnose(out, x, bias, torch.float32) is None


def test_an_unrecognised_mistake_gets_no_diagnosis():
    x, bias = _inputs((4, 33), torch.float32)
    assert spec.diagnose(_fp32_inside(x, bias) * 1.5, x, bias, torch.float32) is None


# --- the benchmark size -------------------------------------------------------------------------------

def test_bench_rows_on_the_h200_and_on_a_small_card():
    h200_l2 = 60 * 2**20
    assert spec.bench_rows(h200_l2, 140 * 2**30) == 16384  # x + out = 537 MB, 8.5x the L2
    assert 2 * spec.bench_rows(h200_l2, 140 * 2**30) * 4096 * 4 >= 8 * h200_l2
    big_l2 = 128 * 2**20
    assert 2 * spec.bench_rows(big_l2, 140 * 2**30) * 4096 * 4 >= 8 * big_l2
    small = spec.bench_rows(4 * 2**20, 1 * 2**30)  # 4 MiB L2, 1 GiB free: capped by memory
    assert small * 4 * 4096 * 4 <= 2**30 // 2
