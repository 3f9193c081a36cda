"""Checks for exercise 1, vector add: ``add(x, y) -> Tensor``.

Byte model: read x, read y, write out, once each: ``3 * n * element_size`` bytes.
"""

import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.learner.access_map import ShowCase, parse_size


#: The stub suggests BLOCK_SIZE = 1024; sizes straddle it and smaller blocks a learner might try.
BLOCK = 1024
#: Sizes where masks go wrong: tiny, around powers of two and the block, primes, and one large.
SIZES = [1, 2, 3, 127, 128, 129, BLOCK - 1, BLOCK, BLOCK + 1, 4093, 65537]
LARGE = {"interpreter": (1 << 20) + 3, "gpu": (1 << 24) + 3}


def minimum_bytes(n: int, element_size: int) -> int:
    """Fewest bytes an add can move: two reads and one write of n elements."""
    return 3 * n * element_size


def show_inputs(size: str | None = None) -> ShowCase:
    """`grade show 1`: x and y of n = 1500 float32 (``--size N``).

    More than the stub's BLOCK_SIZE of 1024, so the grid has two programs and the second one's
    block is partial (476 of its 1024 lanes hold data): a missing mask, a mask off by one or a
    grid rounded down each show in the map.
    """
    (n,) = parse_size(size, (1500,), ("N (elements)",), "1000")
    rng = torch.Generator().manual_seed(0)
    x = checks.randn((n,), torch.float32, rng, "cpu")
    y = checks.randn((n,), torch.float32, rng, "cpu")
    return ShowCase({"x": x, "y": y}, label=f"x and y of n = {n}, float32")


def _check(fn, n, dtype, rng, device):
    x = checks.randn((n,), dtype, rng, device)
    y = checks.randn((n,), dtype, rng, device)
    expected = x.double() + y.double()
    checks.run_case(fn, {"x": x, "y": y}, expected, dtype=dtype)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
def test_matches_reference(learner_function, n, dtype, rng, device):
    _check(learner_function, n, dtype, rng, device)


@pytest.mark.parametrize("dtype", [torch.float32], ids=checks.dtype_id)
def test_large(learner_function, dtype, rng, device, mode):
    _check(learner_function, LARGE[mode], dtype, rng, device)


def test_traffic(learner_function, rng, device):
    """Interpreter: count the bytes actually moved; an add reads x and y once and writes out once."""
    n = 3 * BLOCK + 7  # several programs and a ragged tail: the masked-out lanes must not count
    x = checks.randn((n,), torch.float32, rng, device)
    y = checks.randn((n,), torch.float32, rng, device)
    checks.expect_traffic(learner_function, {"x": x, "y": y}, minimum_bytes=minimum_bytes(n, 4),
                          max_passes={"x": 1.0, "y": 1.0}, max_ratio=1.0,
                          lesson="an add needs each input once")


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device``: each input set (x, y and out) 16 L2 sizes, several sets timed in
    turns by the judge, all of them in half the free memory."""
    from grader.judge import clock

    n = plan.elements_for_cache(3 * 4, device.cache_bytes, free_bytes, l2_multiple=16,
                                budget_fraction=0.5 / (clock.SETS + 1))
    return plan.PerformanceInput(label=f"n = {n:,} fp32", dtype="fp32", data_bytes=minimum_bytes(n, 4),
                                 held_bytes=plan.timed_sets_bytes(3 * 4 * n, free_bytes) + 4 * n, sizes={"n": n})


def test_performance(exercise, learner_function, mode):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    _, timed = plan.here(__file__)
    n = timed.sizes["n"]

    def make_set(generator):
        x = torch.randn(n, device="cuda", generator=generator)
        y = torch.randn(n, device="cuda", generator=generator)
        return [x, y], {}

    def verify(out, args, kwargs):
        x, y = args
        checks.require(torch.equal(out, x + y), f"`out` is wrong at the benchmark size n = {n}")

    checks.measure_bandwidth(learner_function, make_set, nbytes=minimum_bytes(n, 4), floor=exercise.floor,
                             verify=verify, label=timed.label)
