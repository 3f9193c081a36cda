"""Checks for exercise $number, $nav_title: ``$function(x) -> Tensor``.

Byte model: read x and write out, once each: ``2 * n * element_size`` bytes.
"""

import pytest
import torch

from grader import plan
from grader.judge import checks

#: The stub's block; the sizes straddle it.
BLOCK = 1024
SIZES = [1, 3, BLOCK - 1, BLOCK + 1, 4093]


def minimum_bytes(n: int, element_size: int) -> int:
    """Fewest bytes the call can move: one read and one write of n elements."""
    return 2 * n * element_size


def _check(fn, n, dtype, rng, device):
    x = checks.randn((n,), dtype, rng, device)
    checks.run_case(fn, {"x": x}, x.double(), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=checks.dtype_id)
@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
def test_matches_reference(learner_function, n, dtype, rng, device):
    _check(learner_function, n, dtype, rng, device)


def test_traffic(learner_function, rng, device):
    """Interpreter: count the bytes actually moved; x is read once, out written once."""
    n = 3 * BLOCK + 7
    x = checks.randn((n,), torch.float32, rng, device)
    checks.expect_traffic(learner_function, {"x": x}, minimum_bytes=minimum_bytes(n, 4),
                          max_passes={"x": 1.0}, max_ratio=1.0,
                          lesson="a copy needs its input once")


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device`` (`grader.plan`): each input set (x and out)
    16 caches large, several sets in half the free memory."""
    from grader.judge import clock

    budget = 0.5 / (clock.SETS + 1)
    n = plan.elements_for_cache(2 * 4, device.cache_bytes, free_bytes,
                                l2_multiple=16, budget_fraction=budget)
    held = plan.timed_sets_bytes(2 * 4 * n, free_bytes)
    return plan.PerformanceInput(label=f"n = {n:,} fp32", dtype="fp32",
                                 data_bytes=minimum_bytes(n, 4), held_bytes=held,
                                 sizes={"n": n})


def test_performance(exercise, learner_function, mode):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    if exercise.floor is None:
        pytest.skip("performance: no floor yet")
    _, timed = plan.here(__file__)
    n = timed.sizes["n"]

    def make_set(generator):
        return [torch.randn(n, device="cuda", generator=generator)], {}

    def verify(out, args, kwargs):
        checks.require(torch.equal(out, args[0]),
                       f"`out` is wrong at the benchmark size n = {n}")

    checks.measure_bandwidth(learner_function, make_set, nbytes=minimum_bytes(n, 4),
                             floor=exercise.floor, verify=verify, label=timed.label)
