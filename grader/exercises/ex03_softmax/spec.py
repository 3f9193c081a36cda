"""Checks for exercise 3, fused softmax: ``softmax(x) -> Tensor``.

Rows of a 2-D tensor ``x`` (M, N), any row stride, rows of up to 128 KiB in one block (N up to
32768 in fp32, 65536 in fp16 and bf16: `grader.exercises._shared.softmax_checks.max_cols`), fp32, fp16 and bf16
(arithmetic in fp32 inside). Every call must be exactly one kernel launch into an output
allocated with ``empty_like`` (a ``zeros_like`` is an extra launch, reported as a fill).

The contract for special rows, the same as ``torch.softmax``'s:

* a logit of -inf (a masked position) gives exactly 0;
* a row that is entirely -inf gives NaN everywhere (0 / 0: no distribution over no admissible
  value). A kernel that subtracts the row max produces that by itself.

Byte model: read x and write out once each, ``2 * M * N * element_size`` bytes.

When an answer is wrong, `grader.exercises._shared.softmax_checks.diagnose` recomputes it the way each known
pitfall computes it (masked lanes loaded as 0, masked lanes not zeroed before the sum, no max
subtraction, the grid one row short) and names the pitfall the learner's output matches; the
strided check tells a kernel that ignores the row stride by rerunning on contiguous rows.
"""

import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.learner.access_map import ShowCase
from grader.exercises._shared import softmax_checks as sm


#: Row lengths where masks go wrong: 1, 2, 3 (blocks of 1, 2 and 4 lanes), 781 (243 masked lanes of
#: a 1024 block), 1823 (a prime: 225 masked of 2048), 4097 (a power of two + 1: 4095 masked of 8192).
COLS = [1, 2, 3, 781, 1823, 4097]
#: Odd row counts. The interpreter runs about 1 ms of Python per program plus the block's work,
#: so long rows get few rows there.
ROWS = {"interpreter": {1: 37, 2: 9, 3: 7, 781: 5, 1823: 3, 4097: 3}, "gpu": {n: 1031 for n in COLS}}
#: (rows, columns, row stride) of the strided check: a column slice of a wider tensor.
STRIDED = {"interpreter": (5, 781, 1000), "gpu": (257, 1823, 2053)}
#: Rows of the longest-row check, whose rows are as long as one block holds (`sm.max_cols`: 32768
#: float32 or 65536 16-bit columns). Few: in the interpreter each program is one NumPy array of the
#: whole row, and on a GPU the float64 reference of 263 rows of 65536 is 138 MB on the host.
LONGEST_ROWS = {"interpreter": 3, "gpu": 263}
#: Rows of the stability and masking checks (even rows of the stability check have logits ~1e4).
SPECIAL = {"interpreter": (6, 781), "gpu": (1030, 1823)}
#: The performance check's columns: 4096 fp32 (the middle of the benchmark's row sweep); the rows come
#: from the card's plan (`performance_input`: 12 L2s of input on the H200).
PERF_COLS = 4096


def minimum_bytes(n_rows: int, n_cols: int, element_size: int) -> int:
    """Fewest bytes a softmax can move: one read of x and one write of out."""
    return 2 * n_rows * n_cols * element_size


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
@pytest.mark.parametrize("n_cols", COLS, ids=lambda n: f"n{n}")
def test_matches_reference(learner_function, n_cols, dtype, rng, device, mode):
    x = sm.normal_rows((ROWS[mode][n_cols], n_cols), dtype, rng, device)
    sm.check(learner_function, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=checks.dtype_id)
def test_strided_rows(learner_function, dtype, rng, device, mode):
    n_rows, n_cols, row_stride = STRIDED[mode]
    x = sm.normal_rows((n_rows, n_cols), dtype, rng, device)
    sm.check_strided(learner_function, x, row_stride)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_longest_row(exercise, learner_function, dtype, rng, device, mode):
    """128 KiB rows: 32768 float32 columns, 65536 float16 or bfloat16 columns, one block each."""
    x = sm.normal_rows((LONGEST_ROWS[mode], sm.max_cols(dtype)), dtype, rng, device)
    sm.check_longest(learner_function, x, exercise=exercise.number)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_extreme_logits(learner_function, dtype, rng, device, mode):
    """Logits of magnitude 1e4 in every other row: finite, correct, nearly one-hot rows."""
    x = sm.extreme_rows(SPECIAL[mode], dtype, rng, device)
    sm.check(learner_function, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=checks.dtype_id)
def test_masked_logits(learner_function, dtype, rng, device, mode):
    """About a third of the logits are -inf: exactly 0 there, the rest a softmax over the others."""
    x = sm.masked_rows(SPECIAL[mode], dtype, rng, device)
    sm.check(learner_function, x)


def test_fully_masked_row(learner_function, rng, device, mode):
    """A row that is entirely -inf gives NaN, as torch.softmax does; the other rows are unaffected."""
    n_rows, n_cols = SPECIAL[mode]
    x = sm.masked_rows((n_rows, n_cols), torch.float32, rng, device, fully_masked_row=1)
    checks.run_case(learner_function, {"x": x}, sm.expect_fully_masked(x, 1),
                    max_launches=1)


def show_inputs(size: str | None = None) -> ShowCase:
    """`grade show 3`: 5 rows of 781 float32, 1000 elements apart (``--size M,N,ROW_STRIDE``).

    781 is far from a power of two (243 masked lanes in a 1024-wide block), and the gaps between
    the rows show a load without a mask, or rows addressed as ``row * n_cols``."""
    return sm.show_rows(size, (5, 781, 1000))


def test_traffic(learner_function, rng, device):
    """Interpreter: a fused softmax reads each row once and writes it once (ratio 1.00)."""
    m, n = 5, 781  # a row far from a power of two: the block's masked lanes must not count
    x = checks.randn((m, n), torch.float32, rng, device)
    checks.expect_traffic(learner_function, {"x": x}, minimum_bytes=minimum_bytes(m, n, 4),
                          max_passes={"x": 1.0}, max_ratio=1.0,
                          lesson="a fused softmax keeps the row in registers between the max, the sum and the store")


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device``: rows of PERF_COLS fp32 columns (`grader.exercises._shared.softmax_checks.softmax_input`)."""
    return sm.softmax_input(device, free_bytes, n_cols=PERF_COLS, minimum_bytes=minimum_bytes)


def test_performance(exercise, learner_function, mode):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    _, timed = plan.here(__file__)
    sm.measure_softmax_bandwidth(learner_function, timed, floor=exercise.floor, minimum_bytes=minimum_bytes)
