"""Exercise 5's spec on its own (no Triton): the byte model, the pitfall diagnosis, and that the
spec's inputs really tell each known mistake from the right answer, at the interpreter's row
length and at the GPU's."""

from __future__ import annotations

import pytest
import torch

from grader.exercises.ex05_online_softmax import spec

WAYS = {
    "rescale": (spec._rescale_missing, "the running sum was not rescaled when the max changed"),
    "rescale_per_lane": (spec._rescale_missing_per_lane, "the running sum was not rescaled when the max changed"),
    "tail": (spec._tail_lanes_summed, "masked tail lanes added to the sum"),
    "last_block_max": (spec._last_block_max, "normalized with the max of the last block only"),
    "one_pass": (spec._stored_in_one_pass, "stored before the row's sum was known"),
}


def _rows(n_cols: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn((3, n_cols), generator=generator, dtype=torch.float64)
    x[0, n_cols - 1] = 80.0  # a late max, so that every mistake shows
    return x


def test_minimum_bytes_counts_two_reads_and_one_write():
    assert spec.minimum_bytes(256, 1 << 20, 4) == 3 * (1 << 30)
    assert spec.minimum_bytes(3, 5, 2) == 90


def test_least_hbm_bytes_counts_one_read_and_one_write():
    """What the memory moves when the L2 serves the second read: the grader's bound for a cache hit."""
    assert spec.least_hbm_bytes(256, 1 << 20, 4) == 2 * (1 << 30)
    assert spec.least_hbm_bytes(3, 5, 2) == 60 < spec.minimum_bytes(3, 5, 2)


def test_by_hand_row_of_the_docs():
    # docs/exercises/ex05_online_softmax.md: x = [1, 3, 2, 5] in blocks of two.
    x = torch.tensor([[1.0, 3.0, 2.0, 5.0]], dtype=torch.float64)
    assert torch.allclose(spec._rescale_missing(x, 2),
                          torch.tensor([[0.008382, 0.061935, 0.022785, 0.457640]], dtype=torch.float64), atol=1e-6)
    one_pass = spec._stored_in_one_pass(x, 2)
    assert torch.allclose(one_pass, torch.tensor([[0.119203, 0.880797, 0.041371, 0.830953]], dtype=torch.float64),
                          atol=1e-6)
    tail = spec._tail_lanes_summed(x[:, :3], 2)
    assert torch.allclose(tail, torch.tensor([[0.087144, 0.643914, 0.236883]], dtype=torch.float64), atol=1e-6)
    assert spec._tail_lanes_summed(x, 2) is None  # no masked lanes, nothing to add
    early = torch.tensor([[5.0, 3.0, 2.0, 1.0]], dtype=torch.float64)
    assert spec._last_block_max(early, 2)[0, 0].item() == pytest.approx(16.690130, abs=1e-6)
    assert torch.allclose(spec._last_block_max(x, 2), torch.softmax(x, dim=-1))  # invisible there


@pytest.mark.parametrize("block", [16, spec.LAUNCHER_BLOCK])
@pytest.mark.parametrize("way", sorted(WAYS))
def test_each_pitfall_is_named(way, block):
    x = _rows(3 * spec.LAUNCHER_BLOCK + 5)
    expected = torch.softmax(x, dim=-1)
    fn, message = WAYS[way]
    got = fn(x, block).float()
    assert spec.diagnose(got, x, expected).startswith(message)


def test_no_pitfall_named_for_other_wrong_answers():
    x = _rows(3 * spec.LAUNCHER_BLOCK + 5)
    expected = torch.softmax(x, dim=-1)
    assert spec.diagnose(expected.float(), x, expected) is None  # right
    assert spec.diagnose(expected.flip(1).float(), x, expected) is None  # wrong, but not a known way


def test_nan_after_a_masked_prefix_is_named():
    x = _rows(3 * spec.LAUNCHER_BLOCK + 5)
    x[1, : spec.LAUNCHER_BLOCK * 2] = float("-inf")
    expected = torch.softmax(x, dim=-1)
    got = expected.float().clone()
    got[1] = float("nan")
    assert spec.diagnose(got, x, expected) == spec.INF_BLOCK


#: (pattern, the mistake it is there to catch).
CATCHES = [("late_spike", "rescale"), ("late_spike", "rescale_per_lane"), ("negative_start", "rescale"),
           ("all_negative", "tail"), ("early_spike", "last_block_max"), ("late_spike", "one_pass")]


@pytest.mark.parametrize("mode", ["interpreter", "gpu"])
@pytest.mark.parametrize("pattern,way", CATCHES, ids=[f"{p}-{w}" for p, w in CATCHES])
def test_the_patterns_catch_their_mistake(pattern, way, mode):
    """The mistake's answer on the spec's own input fails the float32 comparison by far."""
    generator = torch.Generator().manual_seed(1)
    x = spec._pattern(pattern, spec.PATTERN_COLS[mode], torch.float32, generator, "cpu").double()
    expected = torch.softmax(x, dim=-1)
    wrong = WAYS[way][0](x, spec.LAUNCHER_BLOCK)
    worst = ((wrong - expected).abs() / (1e-5 * expected.abs() + 1e-6 * expected.abs().max())).max().item()
    assert worst > 100, f"{pattern} hides {way}: worst error only {worst:.3g}x the tolerance"
