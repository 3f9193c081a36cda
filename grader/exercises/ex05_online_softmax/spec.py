"""Checks for exercise 5, online softmax: ``softmax_online(x) -> Tensor``.

Rows of a 2-D tensor (any row stride, fp32/fp16/bf16) far longer than one block: up to 2^20 + 3
columns on a GPU. One pass keeps the running max and the rescaled running sum (Milakov &
Gimelshein, 2018), a second pass reads the row again and writes ``exp(x - m) / d``.

Byte model: read the row twice and write it once, ``3 * M * N * element_size`` bytes. That is
the minimum for *this* algorithm, not for softmax: a kernel that holds a whole row on chip
(exercise 3) needs only ``2 * M * N * element_size``, but a row of 2^20 fp32 values is 4 MiB,
far more than one program's registers, so for rows this long the second read is the price of
the algorithm. The performance check uses rows of 2^20 columns, where the second read cannot
come from the L2 cache (hundreds of 4 MiB rows are in flight), so the count is honest.

When an answer is wrong, the spec recomputes it the ways the known pitfalls compute it (for
every power-of-two block size) and, when one matches, names the pitfall before the usual
mismatch listing.
"""

from __future__ import annotations

import math

import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.learner.access_map import ShowCase
from grader.judge.compare import DEFAULT_TOLERANCES, expect_close
from grader.wire.failures import GradeFailure
from grader.exercises._shared import softmax_checks


#: The stub's launcher reads rows in blocks of BLOCK_SIZE = min(LAUNCHER_BLOCK, next_power_of_2(n_cols)).
#: Every row below that matters is several times longer, so every check walks many blocks, in
#: Triton's interpreter too.
LAUNCHER_BLOCK = 8192
#: (rows, columns): one element, tiny rows, odd sizes, a block - 1 (one masked lane), a block, a block
#: + 1 (a second block holding a single column), exact multiples, and several blocks with a tail.
SHAPES = [(1, 1), (3, 2), (5, 3), (3, 781), (2, LAUNCHER_BLOCK - 1), (3, LAUNCHER_BLOCK),
          (3, LAUNCHER_BLOCK + 1), (5, 2 * LAUNCHER_BLOCK), (3, 3 * LAUNCHER_BLOCK + 5)]
#: Rows of the pattern checks: three blocks and a 5-column tail in the interpreter, 2^20 + 3 on a GPU.
PATTERN_COLS = {"interpreter": 3 * LAUNCHER_BLOCK + 5, "gpu": (1 << 20) + 3}
#: The long-row check: eight blocks and a tail in the interpreter, 2^20 + 3 columns (129 blocks) on a GPU.
LONG = {"interpreter": (3, 8 * LAUNCHER_BLOCK + 3), "gpu": (3, (1 << 20) + 3)}
#: The performance check's rows: 2^20 fp32 columns (4 MiB per row).
PERF_COLS = 1 << 20
#: The shortest timed rows on a card with little memory: 64 blocks of 1024, still far more than a program holds.
MIN_PERF_COLS = 1 << 16

NEG_INF = float("-inf")


def minimum_bytes(n_rows: int, n_cols: int, element_size: int) -> int:
    """Fewest bytes the two-pass online softmax moves: two reads of x and one write of out.

    This is the minimum for this algorithm, whose rows do not fit on chip; a softmax that holds
    a row in registers (exercise 3) moves only ``2 * n_rows * n_cols * element_size``.
    """
    return 3 * n_rows * n_cols * element_size


def least_hbm_bytes(n_rows: int, n_cols: int, element_size: int) -> int:
    """What the memory must move even if the L2 served every second read: one read and one write.

    A kernel whose second pass finds its row still in the L2 (a row split over programs that re-read
    it soon after) moves this and not `minimum_bytes`: by the algorithm's count it would pass
    100% of the ceiling, a cache hit rather than a measurement error."""
    return 2 * n_rows * n_cols * element_size


# --- the answer, and the wrong answers the known pitfalls give ------------------------------

def _exp_minus(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """exp(a - b), with exp(-inf - anything) = 0 (no NaN from -inf - -inf)."""
    return torch.where(a == NEG_INF, torch.zeros_like(a), torch.exp(a - b))


def _blocks(x: torch.Tensor, block: int) -> torch.Tensor:
    """x (M, N) as (M, blocks, block), the tail padded with -inf, as a kernel with other=-inf reads it."""
    m, n = x.shape
    count = -(-n // block)
    padded = torch.full((m, count * block), NEG_INF, dtype=x.dtype, device=x.device)
    padded[:, :n] = x
    return padded.view(m, count, block)


def _normalize(x: torch.Tensor, m: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    return _exp_minus(x, m[:, None]) / d[:, None]


def _rescale_missing(x: torch.Tensor, block: int) -> torch.Tensor:
    """d accumulated block by block against the running max, never multiplied by exp(m_old - m_new)."""
    blocks = _blocks(x, block)
    running = torch.cummax(blocks.amax(dim=-1), dim=1).values  # running max after each block
    d = _exp_minus(blocks, running[..., None]).sum(dim=(1, 2))
    return _normalize(x, running[:, -1], d)


def _rescale_missing_per_lane(x: torch.Tensor, block: int) -> torch.Tensor:
    """The same mistake in the per-lane form (one running max and sum per lane, merged at the end)."""
    blocks = _blocks(x, block)
    running = torch.cummax(blocks, dim=1).values  # per lane
    lane_sum = _exp_minus(blocks, running).sum(dim=1)
    lane_max = running[:, -1, :]
    m = lane_max.amax(dim=-1)
    d = (lane_sum * _exp_minus(lane_max, m[:, None])).sum(dim=-1)
    return _normalize(x, m, d)


def _tail_lanes_summed(x: torch.Tensor, block: int) -> torch.Tensor | None:
    """The last block's masked lanes loaded as 0 and counted: a softmax over the row plus k zeros."""
    k = -(-x.shape[1] // block) * block - x.shape[1]
    if k == 0:
        return None
    m = torch.clamp(x.amax(dim=-1), min=0.0)  # the zeros take part in the max too
    d = _exp_minus(x, m[:, None]).sum(dim=-1) + k * torch.exp(-m)
    return _normalize(x, m, d)


def _last_block_max(x: torch.Tensor, block: int) -> torch.Tensor:
    """The right sum, but pass 2 subtracts the max of the last block instead of the row's max."""
    last = (-(-x.shape[1] // block) - 1) * block
    m = x.amax(dim=-1)
    d = _exp_minus(x, m[:, None]).sum(dim=-1)
    m_last = x[:, last:].amax(dim=-1)
    return torch.where(x == NEG_INF, torch.zeros_like(x), torch.exp(x - m_last[:, None])) / d[:, None]


def _stored_in_one_pass(x: torch.Tensor, block: int) -> torch.Tensor:
    """Each block written as exp(x - m) / d with the statistics of the blocks read so far.

    exp(x - m_b) / d_b = exp(x - L_b), where L_b = log(sum of exp(x) over blocks 0..b).
    """
    m, n = x.shape
    blocks = _blocks(x, block)
    running_log_sum = torch.logcumsumexp(torch.logsumexp(blocks, dim=-1), dim=1)
    out = _exp_minus(blocks, running_log_sum[..., None])
    return out.reshape(m, -1)[:, :n]


#: (message, wrong way), in the order they are tried. Messages name the pitfall first.
PITFALLS = (
    ("the running sum was not rescaled when the max changed: when a block raises the running max "
     "from m_old to m_new, the sum so far is a sum of exp(x - m_old) and must be multiplied by "
     "exp(m_old - m_new) before the block's own terms are added", (_rescale_missing, _rescale_missing_per_lane)),
    ("masked tail lanes added to the sum: the lanes past the end of the row in the last block were "
     "loaded as 0 (other=0, or no `other`), so each one added exp(0 - m) to the sum; load them with "
     "other=float(\"-inf\"), which adds exp(-inf) = 0", (_tail_lanes_summed,)),
    ("normalized with the max of the last block only: the second pass must subtract the row's "
     "running max m (the max over every block), not the max of the block the first loop ended on",
     (_last_block_max,)),
    ("stored before the row's sum was known: each block was written with the max and sum of the "
     "blocks read so far, so only the last block is right. Every output needs the final m and d, "
     "which exist only after the whole row has been read: finish the first pass over all blocks, "
     "then read the row again to write", (_stored_in_one_pass,)),
)

INF_BLOCK = ("a block whose entries are all -inf gave NaN: while the running max is still -inf, "
             "exp(m_old - m_new) = exp(-inf - (-inf)) is NaN and it poisons the sum; measure against 0 "
             "while the max is -inf (`m_ref = tl.where(m_new == float(\"-inf\"), 0.0, m_new)`), as "
             "attention kernels do for fully masked rows")


def _block_sizes(n_cols: int) -> list[int]:
    """Every power-of-two block a kernel might use on rows of n_cols, 2 up to the first block >= the
    row: the stub's own block first (most learners keep it), then from large to small."""
    top = max(1, math.ceil(math.log2(max(n_cols, 2))))
    sizes = [1 << p for p in range(top, 0, -1)]
    first = min(LAUNCHER_BLOCK, sizes[0])
    return [first] + [b for b in sizes if b != first]


def _close(got: torch.Tensor, wrong: torch.Tensor, dtype: torch.dtype, scale: float, slack: float = 1.0) -> bool:
    tol = DEFAULT_TOLERANCES.get(dtype, DEFAULT_TOLERANCES[torch.float32])
    finite = torch.isfinite(wrong)
    if not bool(((got == wrong) | (torch.isnan(got) & torch.isnan(wrong)))[~finite].all()):
        return False
    bound = slack * (tol.rtol * wrong.abs() + tol.atol * scale)
    return bool(((got - wrong).abs() <= bound)[finite].all())


def _scale(t: torch.Tensor) -> float:
    finite = t[torch.isfinite(t)]
    return (finite.abs().max().item() if finite.numel() else 1.0) or 1.0


def _matches(got: torch.Tensor, wrong: torch.Tensor, dtype: torch.dtype, sample: torch.Tensor) -> bool:
    """Does the learner's output equal this wrong answer, within the dtype's tolerance?

    The wrong answer is rounded to the output's dtype first: where it overflows there (e^76 in
    float16), the learner's kernel stored inf too. A few columns are compared first (the cheap
    way to reject the many wrong answers that are nothing like the output).
    """
    wrong = wrong.to(dtype).double()
    some_wrong = wrong[:, sample]
    if not _close(got[:, sample], some_wrong, dtype, _scale(some_wrong), slack=2.0):
        return False
    return _close(got, wrong, dtype, _scale(wrong))


def diagnose(result, x: torch.Tensor, expected: torch.Tensor) -> str | None:
    """The pitfall that explains a wrong ``result`` for input ``x``, or None.

    ``x`` and ``expected`` are float64. Tries each pitfall at every power-of-two block size.
    """
    if not isinstance(result, torch.Tensor) or tuple(result.shape) != tuple(x.shape) or x.numel() == 0:
        return None
    from grader.wire import guards

    if bool(guards.is_poison(result.detach()).any()):
        return None  # unwritten elements: the generic message says it better
    got = result.detach().to(x.device).double()
    nan_rows = (torch.isnan(got) & ~torch.isnan(expected)).any(dim=1)
    if bool(nan_rows.any()) and bool((x[nan_rows, 0] == NEG_INF).all()):
        return INF_BLOCK
    n = x.shape[1]
    # The first and last columns, ~256 spread over the row, and where each row of the output peaks.
    sample = torch.cat([torch.arange(0, n, max(1, n // 256), device=x.device),
                        torch.tensor([0, 1, 2, n - 3, n - 2, n - 1], device=x.device).clamp(0, n - 1),
                        torch.nan_to_num(got, nan=0.0).argmax(dim=1)]).unique()
    truth = expected.to(result.dtype).double()
    for block in _block_sizes(n):
        for message, ways in PITFALLS:
            for way in ways:
                wrong = way(x, block)
                # A wrong way that gives the right answer on this input explains nothing.
                if (wrong is not None and _matches(got, wrong, result.dtype, sample)
                        and not _matches(truth, wrong, result.dtype, sample)):
                    return message
    return None


def expect_softmax(x: torch.Tensor, dtype: torch.dtype):
    """A check for run_case: the float64 softmax of ``x`` by rows, with pitfalls named on failure."""
    x64 = x.double()
    expected = torch.softmax(x64, dim=-1)
    expected_cpu = expected.cpu()

    def check(result) -> None:
        try:
            expect_close(result, expected, name="out", dtype=dtype)
            # Then with each row's own scale: a tensor-wide one would excuse errors in the ordinary
            # rows of a case whose other rows are nearly one-hot (exercise 3's comparison).
            softmax_checks.expect_close_by_row(result, expected_cpu)
        except GradeFailure as failure:
            pitfall = diagnose(result, x64, expected)
            if pitfall is None:
                raise
            raise GradeFailure(f"{pitfall}. {failure}", kind=failure.kind) from None

    return check


def _run(fn, x: torch.Tensor, dtype: torch.dtype) -> checks.CaseReport:
    # One launch per call, no fill: the output is written once, by the kernel.
    return checks.run_case(fn, {"x": x}, expect_softmax(x, dtype), max_launches=1)


# --- inputs -----------------------------------------------------------------------------------

def _pattern(name: str, n_cols: int, dtype, rng, device) -> torch.Tensor:
    """Rows built to break one idea each; the comments say which."""
    n_rows = 5 if name == "leading_inf" else 3
    x = torch.randn((n_rows, n_cols), generator=rng, dtype=torch.float32)
    if name == "late_spike":
        # The max arrives in the last block (and, in row 1, in the middle one): the running max
        # jumps by ~76 after most of the sum is in, so an unrescaled sum is off by e^76.
        x[0, n_cols - 1] = 80.0
        x[1, n_cols // 2 + 1] = 80.0
        x[2, n_cols - 3] = 80.0
    elif name == "early_spike":
        # The max is in the first block: the last block's max is ~76 below it.
        x[:, 1] = 80.0
    elif name == "negative_start":
        # The first 40% of the row (the first block, for any block <= 0.4 n) is around -60:
        # the running max starts near -57 and jumps to ~4 when the ordinary values arrive.
        x[:, : max(1, (2 * n_cols) // 5)] -= 60.0
    elif name == "all_negative":
        # Every value near -40: a masked lane loaded as 0 becomes the max and outweighs the row.
        x -= 40.0
    elif name == "neg_inf":
        # Masked logits: scattered -inf, and in row 1 a whole stretch of them mid-row. Exact zeros there.
        x[torch.rand((n_rows, n_cols), generator=rng) < 0.1] = NEG_INF
        x[1, n_cols // 4: n_cols // 2] = NEG_INF
        x[:, 0] = 0.5  # every row keeps a finite value
    elif name == "leading_inf":
        # A masked prefix, as in causal attention: whole blocks of -inf before any finite value.
        # Row 3 is -inf throughout: NaN everywhere, as torch.softmax gives (0 / 0). Row 4 is plain.
        x[0, : n_cols // 2] = NEG_INF
        x[1, : (3 * n_cols) // 5] = NEG_INF
        x[2, : max(0, n_cols - 3)] = NEG_INF
        x[3, :] = NEG_INF
    elif name == "huge":
        # Logits of magnitude 1e4: exp(x) overflows float32 unless the max is subtracted.
        x = (x * 1e4).clamp(-6e4, 6e4)  # within float16's range
    else:  # pragma: no cover - a typo in PATTERNS
        raise ValueError(name)
    return x.to(dtype).to(device)


PATTERNS = ["late_spike", "early_spike", "negative_start", "all_negative", "neg_inf", "leading_inf", "huge"]
#: Every pattern in float32; in float16 and bfloat16 the ones where rounding could hide a mistake
#: or make one (a spike of 80, an exponent jump of 60, masked prefixes, logits of 1e4).
PATTERN_CASES = [(p, torch.float32) for p in PATTERNS] + [
    (p, dtype) for dtype in (torch.float16, torch.bfloat16)
    for p in ("late_spike", "negative_start", "leading_inf", "huge")]


# --- the checks -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_matches_reference(learner_function, shape, dtype, rng, device):
    x = checks.randn(shape, dtype, rng, device)
    _run(learner_function, x, dtype)


@pytest.mark.parametrize("pattern,dtype", PATTERN_CASES, ids=[f"{p}-{checks.dtype_id(d)}" for p, d in PATTERN_CASES])
def test_row_pattern(learner_function, pattern, dtype, rng, device, mode):
    x = _pattern(pattern, PATTERN_COLS[mode], dtype, rng, device)
    _run(learner_function, x, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=checks.dtype_id)
def test_strided_rows(learner_function, dtype, rng, device, mode):
    # Rows 37 elements further apart than their length: the gaps hold NaN, so a kernel that steps
    # by n_cols instead of the row stride reads them.
    n_cols = PATTERN_COLS[mode]
    x = checks.with_row_stride(checks.randn((5, n_cols), dtype, rng, device), n_cols + 37)
    _run(learner_function, x, dtype)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_long_rows(learner_function, dtype, rng, device, mode):
    n_rows, n_cols = LONG[mode]
    x = checks.randn((n_rows, n_cols), dtype, rng, device)
    report = _run(learner_function, x, dtype)
    for launch in report.launches:
        block = launch.arguments.get("BLOCK_SIZE")
        if isinstance(block, int) and block >= n_cols:
            raise GradeFailure(
                f"each row was read as one block of BLOCK_SIZE = {block} >= n_cols = {n_cols}: this exercise "
                f"is about rows longer than any block. Keep BLOCK_SIZE = min({LAUNCHER_BLOCK}, "
                "triton.next_power_of_2(n_cols)) and walk the row in a loop inside the kernel; a block as "
                "long as a row of 2^20 + 3 columns (2^21) is past Triton's limit of 2^20 elements per "
                "tensor, and far past the registers of one program"
            )


def show_inputs(size: str | None = None) -> ShowCase:
    """`grade show 5`: 3 rows of 2 x 8192 + 5 float32, 16400 elements apart (``--size M,N,ROW_STRIDE``).

    Each row takes two blocks of the launcher's 8192 and a ragged third: the map shows each row
    read twice (statistics, then normalization) and the last block's tail masked."""
    return softmax_checks.show_rows(size, (3, 2 * LAUNCHER_BLOCK + 5, 2 * LAUNCHER_BLOCK + 16))


def test_traffic(learner_function, rng, device):
    """Interpreter: the online softmax reads each row exactly twice (the statistics pass, then the
    normalizing pass) and writes it once: the byte model's 3·M·N, ratio 1.00."""
    m, n = 2, 3 * LAUNCHER_BLOCK + 5  # several blocks and a ragged tail
    x = checks.randn((m, n), torch.float32, rng, device)
    checks.expect_traffic(learner_function, {"x": x}, minimum_bytes=minimum_bytes(m, n, 4),
                          max_passes={"x": 2.0}, max_ratio=1.0,
                          lesson="one pass for the running max and sum, one to normalize")


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device``: rows of 2^20 fp32 columns (4 MiB each), two per SM and at least 256:
    hundreds of them in flight are far more than the L2, so both reads come from HBM and the 3-pass byte
    count is what the memory really moved. Where the input and output of every set would not hold that
    many rows, the rows get shorter (halved down to `MIN_PERF_COLS`) before they get fewer: a program per
    row leaves SMs idle when there are fewer rows than SMs (an emulated 8 GiB H200 gave 44 rows of 2^20
    to 132 SMs, and the solution read 38% of the ceiling)."""
    from grader.judge import clock

    wanted = max(256, 2 * device.multiprocessors)

    def fits(cols: int) -> int:  # rows whose input and output fit, for every set
        return int(free_bytes * 0.4 / (clock.SETS + 1)) // (2 * cols * 4)

    n_cols = PERF_COLS
    while n_cols > MIN_PERF_COLS and fits(n_cols) < wanted:
        n_cols //= 2
    n_rows = max(1, min(wanted, fits(n_cols)))
    one_set = 2 * n_rows * n_cols * 4
    return plan.PerformanceInput(label=f"{n_rows} x {n_cols:,} fp32, 3 passes (2 reads + 1 write)", dtype="fp32",
                                 data_bytes=least_hbm_bytes(n_rows, n_cols, 4),
                                 held_bytes=plan.timed_sets_bytes(one_set, free_bytes) + one_set,
                                 sizes={"n_rows": n_rows, "n_cols": n_cols})


def test_performance(exercise, learner_function, mode):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    _, timed = plan.here(__file__)
    n_rows, n_cols = timed.sizes["n_rows"], timed.sizes["n_cols"]

    def make_set(generator):
        return [torch.randn((n_rows, n_cols), device="cuda", generator=generator)], {}

    def verify(out, args, kwargs):
        (x,) = args
        ok = torch.allclose(out, torch.softmax(x, dim=-1), rtol=1e-4, atol=1e-9)
        checks.require(bool(ok), f"`out` is wrong at the benchmark size ({n_rows} x {n_cols})")

    checks.measure_bandwidth(learner_function, make_set, nbytes=minimum_bytes(n_rows, n_cols, 4),
                             least_hbm_bytes=least_hbm_bytes(n_rows, n_cols, 4), floor=exercise.floor, verify=verify,
                             label=timed.label)
