"""Exercise 9's spec, piece by piece and without kernels: the hand cases and byte model agree with the
solution, every byte-model mistake gets its own sentence, and the diagnosis names each known mistake
from the answer that mistake computes (and names nothing for the right answer)."""

from __future__ import annotations

import pytest
import torch

from grader.wire.failures import GradeFailure
from grader.exercises.ex09_rmsnorm import spec
from solutions import ex09_rmsnorm as solution


@pytest.mark.parametrize("case", spec.PARTIAL_CASES, ids=lambda c: c[0])
def test_partial_count_hand_cases_agree_with_the_solution(case):
    _, n_rows, num_sms, per_sm, expected = case
    assert solution.partial_count(n_rows, num_sms, per_sm) == expected
    assert spec.partial_count_reference(n_rows, num_sms, per_sm) == expected
    rows_each = -(-n_rows // expected)
    assert (expected - 1) * rows_each < n_rows <= expected * rows_each  # every program has a row


@pytest.mark.parametrize("case", spec.BYTE_MODEL_CASES, ids=lambda c: f"{c[0]}x{c[1]}-p{c[3]}")
def test_byte_model_agrees_with_the_solution(case):
    m, n, dtype, p = case
    s = torch.empty((), dtype=dtype).element_size()
    assert spec.forward_bytes(m, n, s) == solution.forward_bytes(m, n, s)
    assert spec.backward_bytes(m, n, s, p) == solution.backward_bytes(m, n, s, p)
    assert spec.diagnose_byte_model("forward_bytes", solution.forward_bytes(m, n, s), m, n, s) is None
    assert spec.diagnose_byte_model("backward_bytes", solution.backward_bytes(m, n, s, p), m, n, s, p) is None


def test_byte_model_at_the_benchmark_shape():
    # 16384 x 4096 bf16 with the 261 partials of 2 programs per SM on 132 SMs (by hand):
    # forward (2 * 67108864 + 4096) * 2 + 4 * 16384; backward (3 * 67108864 + 2 * 4096) * 2 + 4 * 16384
    # + 8 * 261 * 4096.
    assert spec.forward_bytes(16384, 4096, 2) == 268_509_184
    assert spec.backward_minimum_bytes(16384, 4096, 2) == 402_735_104
    assert spec.backward_bytes(16384, 4096, 2, 261) == 402_735_104 + 8_552_448


@pytest.mark.parametrize("name", ["forward_bytes", "backward_bytes"])
def test_every_byte_model_mistake_has_its_sentence(name):
    # 2-byte elements: at 4 bytes, rstd and the partial sums "at x's element size" are simply right.
    m, n, s, p = 4099, 781, 2, 528
    partials = p if name == "backward_bytes" else None
    generic = spec.diagnose_byte_model(name, 1, m, n, s, partials)
    for count, reason in spec._byte_model_mistakes(name, m, n, s, p):
        message = spec.diagnose_byte_model(name, count, m, n, s, partials)
        assert message is not None and reason in message, (count, message)
        assert message != generic
    # At 2 bytes, 4-byte partials counted once and 2-byte partials counted twice are the same count:
    # the sentence names both.
    if name == "backward_bytes":
        both = spec.diagnose_byte_model(name, spec.backward_bytes(m, n, s, p) - 4 * p * n, m, n, s, p)
        assert "counted once" in both and "; or the partial sums are counted at x's element size" in both
    assert "whole number" in spec.diagnose_byte_model(name, 1.5, m, n, s, partials)


# --- the diagnosis -------------------------------------------------------------------------------

def _forward_case(dtype=torch.float32, shape=(10, 129), *, eps=spec.SMALL_EPS):
    rng = torch.Generator().manual_seed(0)
    x = spec.small_rows(shape, dtype, rng, "cpu")
    return x, spec.weights(shape[1], dtype, rng, "cpu"), eps


def _forward_as(x, w, rstd64, y64):
    return y64.to(x.dtype), rstd64.float()


def test_the_right_forward_is_not_diagnosed_and_passes():
    x, w, eps = _forward_case()
    y64, r64 = spec.reference_forward(x, w, eps)
    y, rstd = _forward_as(x, w, r64, y64)
    assert spec.diagnose_forward(y, rstd, x, w, eps) is None
    spec.expect_forward(x, w, eps)((y, rstd))


def test_each_forward_mistake_is_named():
    """On rows of zeros and tiny rows: eps outside the root, no eps, a sum for the mean, the block width
    for N, no weight, the RMS for its inverse."""
    x, w, eps = _forward_case()
    first_block = spec._blocks_above(129)[0]
    named = 0
    for sentence, r64, y64, _ in spec._forward_mistakes(x, w, eps):
        if "block width" in sentence and f"block width {first_block}," not in sentence:
            continue  # wider blocks: the same sentence with another number
        y, rstd = _forward_as(x, w, r64, y64)
        with pytest.raises(GradeFailure) as failure:
            spec.expect_forward(x, w, eps)((y, rstd))
        assert str(failure.value).startswith(sentence), sentence
        named += 1
    assert named == 6


def test_masked_lanes_in_the_mean_name_the_block():
    x, w, eps = _forward_case(shape=(5, 129))
    sum_sq = (x.double() ** 2).sum(dim=1)
    r64 = 1.0 / torch.sqrt(sum_sq / 512 + eps)  # a 512-wide block for 129 columns
    y, rstd = _forward_as(x, w, r64, x.double() * r64[:, None] * w.double())
    assert spec.diagnose_forward(y, rstd, x, w, eps).startswith("the mean of squares is divided by the block width 512")


def test_float16_statistics_are_named_where_they_overflow():
    rng = torch.Generator().manual_seed(1)
    x = spec.large_rows((4, 257), torch.float16, rng, "cpu")
    w = spec.weights(257, torch.float16, rng, "cpu")
    y64, r64 = spec.reference_forward(x, w, spec.EPS)
    overflow = (x.double() ** 2).sum(dim=1) > spec.FP16_MAX
    assert overflow.tolist() == [True, False, True, False]
    r_bad = torch.where(overflow, torch.zeros_like(r64), r64 * (1 + 3e-4))  # and a float16 sum's rounding
    y, rstd = _forward_as(x, w, r_bad, x.double() * r_bad[:, None] * w.double())
    assert spec.diagnose_forward(y, rstd, x, w, spec.EPS).startswith("the statistics look computed in float16")


def _backward_case(dtype=torch.float32, shape=(23, 129)):
    rng = torch.Generator().manual_seed(2)
    return spec.backward_inputs(shape, dtype, rng, "cpu")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_the_right_backward_is_not_diagnosed_and_passes(dtype):
    dy, x, w, rstd = _backward_case(dtype)
    dx64, dw64 = spec.reference_backward(dy, x, w, rstd)
    result = (dx64.to(dtype), dw64.to(dtype))
    assert spec.diagnose_backward(*result, dy, x, w, rstd) is None
    spec.expect_backward(dy, x, w, rstd)(result)


def test_each_backward_mistake_is_named():
    dy, x, w, rstd = _backward_case()
    named = 0
    for sentence, dx64, dw64 in spec._backward_mistakes(dy, x, w, rstd):
        if "block width" in sentence and "256" not in sentence:
            continue  # wider blocks than the next power of two: the same sentence with another number
        if "does not use the rstd" in sentence:
            continue  # needs an rstd made with a large eps: the next test
        with pytest.raises(GradeFailure) as failure:
            spec.expect_backward(dy, x, w, rstd)((dx64.float(), dw64.float()))
        assert str(failure.value).startswith(sentence), sentence
        named += 1
    assert named == 7


def test_a_recomputed_rstd_is_named_when_the_given_one_used_a_large_eps():
    rng = torch.Generator().manual_seed(3)
    x = spec.rows_of_scales((7, 129), torch.float32, rng, "cpu", low=0.05, high=0.5)
    rstd = spec.rstd_of(x, spec.GIVEN_RSTD_EPS)
    dy = spec.upstream_gradient(x, rstd, rng, "cpu")
    w = spec.weights(129, torch.float32, rng, "cpu")
    again = 1.0 / torch.sqrt((x.double() ** 2).mean(dim=1) + 1e-6)
    dx64, dw64 = spec._backward64(dy.double(), x.double(), w.double(), again)
    with pytest.raises(GradeFailure, match="^your backward does not use the rstd it was given"):
        spec.expect_backward(dy, x, w, rstd)((dx64.float(), dw64.float()))


def test_hugging_face_rounding_order_is_within_tolerance():
    """x̂ rounded to the input's dtype before dy · x̂ (transformers' LlamaRMSNorm, Liger's "llama" mode)
    is a correct kernel: the dweight tolerance allows one rounding of each term."""
    for dtype in (torch.float16, torch.bfloat16):
        dy, x, w, rstd = _backward_case(dtype, shape=(64, 1025))
        dx64, _ = spec.reference_backward(dy, x, w, rstd)
        x_hat = (x.float() * rstd[:, None]).to(dtype).double()
        dw = (dy.double() * x_hat).sum(dim=0)
        spec.expect_backward(dy, x, w, rstd)((dx64.to(dtype), dw.to(dtype)))


def test_returning_one_tensor_is_said_plainly():
    x, w, eps = _forward_case()
    with pytest.raises(GradeFailure, match=r"must return two tensors, \(y, rstd\); it returned Tensor"):
        spec.expect_forward(x, w, eps)(x)
