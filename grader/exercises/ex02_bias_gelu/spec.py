"""Checks for exercise 2, fused bias + GELU: ``bias_gelu(x, bias) -> Tensor``, and its byte model.

Byte model (also the learner's to write, as ``fused_bytes`` and ``unfused_bytes``):

* fused, the minimum: read x (M·N), read bias (N), write out (M·N):
  ``(2·M·N + N) · element_size``;
* the unfused eager pair ``tmp = x + bias; out = F.gelu(tmp)``: the first kernel reads x and bias
  and writes tmp, the second reads tmp back and writes out: ``(4·M·N + N) · element_size``.

When the output is wrong, the checks try the mistakes learners make (the tanh or sigmoid
approximation, the bias added after the GELU, the bias indexed by row or by the flat offset, rows of x stepped by
N, float32 skipped) and name the one the output matches.
"""

from __future__ import annotations

import math

import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.wire import guards
from grader.learner.access_map import ShowCase, parse_size
from grader.judge.compare import Tolerance, dtype_name, expect_close
from grader.wire.failures import GradeFailure


#: Shapes (M, N): single elements, sizes around the 1024-column block and a 4096-element tile,
#: primes, and one that is 4097 wide (odd M and N throughout).
SHAPES = [(1, 1), (1, 3), (3, 1), (2, 2), (3, 127), (127, 3), (4, 1023), (5, 1025), (7, 129), (2, 4097)]
#: Long and thin, and one very wide row (fp32 only: they cost the interpreter the most).
EXTREME_SHAPES = [(4097, 3), (1, 16411)]
#: (M, N, row stride of x): gaps between the rows, strides that are and are not multiples of 16.
STRIDED = [(5, 127, 131), (3, 1025, 1040), (127, 3, 8)]
#: (M, N): taller than wide and wider than tall, so a bias indexed by the row cannot hide.
BROADCAST = [(64, 5), (5, 64), (17, 33)]
#: Inputs scaled by this for the large-magnitude cases: GELU saturates (0 and z) far from 0.
LARGE_SCALE = 1000.0
#: (M, N, dtype) on which the learner's byte model must agree exactly with ours.
BYTE_MODEL_CASES = [(16384, 4096, torch.float32), (127, 4097, torch.float16), (4097, 3, torch.bfloat16),
                    (1, 1, torch.float32), (3, 1, torch.float16)]
#: The benchmark: 16384 x 4096 (or taller where the L2 is larger), fp32.
BENCH_N = 4096
BENCH_MIN_M = 16384

#: Relative tolerance per output dtype: fp32 computes exactly up to a few ulp; fp16 rounds the
#: result to 11 significant bits (2^-11 relative, twice over); bf16 to 8 (2^-8, twice over: 7.8e-3),
#: hence 1e-2. (Triton's own interpreter rounds float32 -> bfloat16 toward zero; grader.learner.interpreter_fixes
#: makes it round to nearest even, as a GPU does.)
RTOL = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 1e-2}
#: Absolute error allowed on every element. Computed in float32, 1 + erf(z/sqrt(2)) cancels for
#: z in about [-6, -2]: erf near -1 is off by an ulp (6e-8), times z/2, so up to ~4e-7 where the
#: answer itself is ~1e-6. Beyond that erf rounds to -1 exactly and the error vanishes again.
#: It is absolute, not a fraction of max|answer|, so the tanh approximation (off by up to 4.7e-4
#: near z = -2.7, 10% of the answer at z = -3) cannot hide in it on fp16 and bf16.
ABS_TOLERANCE = 1e-6


# --- the byte model -----------------------------------------------------------------------------

def minimum_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes the fused kernel can move: read x and bias once, write out once."""
    return (2 * m * n + n) * element_size


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    """Bytes the eager pair moves: x + bias (read x, bias; write tmp), then gelu (read tmp; write out)."""
    return (4 * m * n + n) * element_size


def _byte_model_mistakes(m: int, n: int, s: int) -> dict[str, list[tuple[int, str]]]:
    """Counts that come from a known mistake, with the sentence that names it."""
    mn = m * n
    return {
        "fused_bytes": [
            ((2 * mn + n), "that counts elements, not bytes: multiply by element_size"),
            (2 * mn * s, "the bias is missing: the kernel also reads its N elements"),
            ((3 * mn) * s, "that reads the bias once per row (M·N elements): it has only N elements, "
                           "read from HBM once and reused by every row"),
            ((3 * mn + n) * s, "that counts the intermediate x + bias once, but the fused kernel keeps it "
                               "in registers: it never reaches memory"),
            ((4 * mn + n) * s, "that is the unfused pair's count: the fused kernel never writes x + bias "
                               "to memory, let alone reads it back"),
        ],
        "unfused_bytes": [
            ((4 * mn + n), "that counts elements, not bytes: multiply by element_size"),
            ((2 * mn + n) * s, "that leaves out the round trip of the intermediate x + bias: the first "
                               "kernel writes all M·N elements of it to memory and the second reads them "
                               "back (2·M·N more elements)"),
            ((3 * mn + n) * s, "that counts only half the round trip of the intermediate x + bias: the first "
                               "kernel writes it and the second reads it back, M·N elements each way"),
            (4 * mn * s, "the bias is missing: the first kernel reads its N elements"),
            ((5 * mn) * s, "that reads the bias once per row (M·N elements): it has only N elements, "
                           "read from HBM once and reused by every row"),
        ],
    }


def diagnose_byte_model(name: str, m: int, n: int, element_size: int, value) -> str | None:
    """None when ``value`` is the right count for ``name``; otherwise the sentence the learner reads."""
    right = (minimum_bytes if name == "fused_bytes" else unfused_bytes)(m, n, element_size)
    call = f"`{name}({m}, {n}, {element_size})`"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{call} returned {value!r} ({type(value).__name__}); it must return a number of bytes (an int)"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return f"{call} returned {value!r}; a count of bytes is a whole number"
    if int(value) == right:
        return None
    what = ("the fused kernel moves at least" if name == "fused_bytes" else "the eager pair x + bias, then gelu, moves")
    message = f"{call} returned {int(value):,} but {what} {right:,} bytes"
    named = [reason for count, reason in _byte_model_mistakes(m, n, element_size)[name] if count == int(value)]
    counts = [count for count, _ in _byte_model_mistakes(m, n, element_size)[name]]
    if len(named) == 1 and counts.count(int(value)) == 1 and int(value) != right:
        return f"{message}: {named[0]}"
    if name == "fused_bytes":
        return f"{message}: read x (M·N elements) and bias (N) once, write out (M·N) once, times element_size"
    return (f"{message}: x + bias reads x (M·N) and bias (N) and writes tmp (M·N); gelu reads tmp (M·N) "
            "and writes out (M·N); times element_size")


# --- references and tolerances ------------------------------------------------------------------

def gelu64(z: torch.Tensor) -> torch.Tensor:
    """The exact GELU in float64: z * Phi(z)."""
    return 0.5 * z * (1.0 + torch.erf(z / math.sqrt(2.0)))


def gelu_tanh64(z: torch.Tensor) -> torch.Tensor:
    """The tanh approximation of GELU (what ``approximate="tanh"`` computes), in float64."""
    return 0.5 * z * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z ** 3)))


def reference(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return gelu64(x.double() + bias.double())


def tolerance(dtype: torch.dtype, expected: torch.Tensor) -> Tolerance:
    """The dtype's relative tolerance, and ABS_TOLERANCE expressed as compare's fraction of max|answer|."""
    finite = expected[torch.isfinite(expected)]
    scale = finite.abs().max().item() if finite.numel() else 1.0
    return Tolerance(rtol=RTOL[dtype], atol=ABS_TOLERANCE / (scale or 1.0))


def _close(got: torch.Tensor, want: torch.Tensor, tol: Tolerance, scale: float) -> torch.Tensor:
    """Elementwise: within tolerance of ``want``, or NaN where ``want`` is NaN (a guard was read)."""
    bound = tol.rtol * want.abs() + tol.atol * scale
    near = (got - want).abs() <= bound
    return torch.where(torch.isnan(want), torch.isnan(got), near)


def _candidates(x: torch.Tensor, bias: torch.Tensor, dtype: torch.dtype) -> list[tuple[str, torch.Tensor]]:
    """What a kernel with one known mistake returns, in float64, with the sentence that names it."""
    x64, b64 = x.double().cpu(), bias.double().cpu()
    m, n = x64.shape
    z = x64 + b64
    found = [
        ("your output matches the tanh approximation of GELU, not the exact erf form: compute "
         "0.5 * z * (1 + erf(z / sqrt(2))) with tl.erf", gelu_tanh64(z)),
        ("your output matches the sigmoid approximation of GELU, z * sigmoid(1.702 * z), not the exact erf "
         "form: compute 0.5 * z * (1 + erf(z / sqrt(2))) with tl.erf", z * torch.sigmoid(1.702 * z)),
        ("this looks like bias added after GELU (gelu(x) + bias): add the bias first and apply GELU "
         "to the sum", gelu64(x64) + b64),
        ("this looks like gelu(x) without the bias: add bias[c] to every element of column c before "
         "the GELU", gelu64(x64)),
    ]
    # Indexed by the row: bias[r] for row r, the guard's NaN once r reaches N.
    by_row = torch.full((m, 1), float("nan"), dtype=torch.float64)
    k = min(m, n)
    by_row[:k, 0] = b64[:k]
    found.append(("the bias looks indexed by the row instead of the column: every row adds the same "
                  "vector, bias[c] to the element in column c", gelu64(x64 + by_row)))
    if dtype != torch.float32:
        rounded = z.to(dtype).double()
        found.append((f"x + bias looks rounded to {dtype_name(dtype)} before the GELU: convert the loaded "
                      "values with `.to(tl.float32)`, add and apply GELU in float32, and round once on the "
                      "store", gelu64(rounded)))
    return found


def _stepped_by_n(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """What a kernel returns that finds row r of a strided x at r * N: it reads the gaps (NaN)."""
    m, n = x.shape
    stride = x.stride(0)
    flat = torch.arange(m * n).reshape(m, n)
    src_row, src_col = flat // stride, flat % stride
    values = torch.full((m, n), float("nan"), dtype=torch.float64)
    inside = src_col < n
    x64 = x.double().cpu()
    values[inside] = x64[src_row[inside], src_col[inside]]
    return gelu64(values + bias.double().cpu())


def diagnose(result: torch.Tensor, x: torch.Tensor, bias: torch.Tensor, dtype: torch.dtype) -> str | None:
    """The known mistake that ``result`` matches, as a sentence; None when it matches none of them.

    ``x`` and ``bias`` are the inputs as the learner received them (x's row stride included).
    """
    if not isinstance(result, torch.Tensor) or tuple(result.shape) != tuple(x.shape) or result.dtype != dtype:
        return None
    if bool(guards.is_poison(result.detach()).any()):
        return None  # unwritten elements: compare's own message says it better
    got = result.detach().double().cpu()
    want = reference(x, bias).cpu()
    tol = tolerance(dtype, want)
    finite = want[torch.isfinite(want)]
    scale = (finite.abs().max().item() if finite.numel() else 1.0) or 1.0
    right = _close(got, want, tol, scale)
    if bool(right.all()):
        return None
    for sentence, candidate in _candidates(x, bias, dtype):
        differs = ~_close(candidate, want, tol, scale)
        if bool(differs.any()) and bool(_close(got, candidate, tol, scale).all()):
            return sentence
    m, n = x.shape
    if x.stride(0) != n and m > 1 and bool(_close(got, _stepped_by_n(x, bias), tol, scale).all()):
        return (f"the rows of x look stepped by N = {n} instead of x.stride(0) = {x.stride(0)}: here x has "
                "gaps between its rows, so row r starts r * x.stride(0) elements after x[0, 0]")
    if m > 1 and bool(right[0].all()) and bool((~right[1:]).any(dim=1).all()):
        if x.stride(0) != n:
            return ("row 0 is right but every later row is wrong: is the bias indexed by the flat offset "
                    "instead of the column, or a row found with the wrong stride?")
        return ("the bias looks indexed by the flat offset instead of the column: row 0 is right but every "
                "later row is wrong. bias has N elements, one per column: load bias[c], not bias[r * N + c]")
    return None


def _expect(x: torch.Tensor, bias: torch.Tensor, dtype: torch.dtype):
    """A check for run_case: compare with the float64 reference; on a mismatch, name the mistake."""
    want = reference(x, bias)
    tol = tolerance(dtype, want)

    def check(result) -> None:
        try:
            expect_close(result, want, name="out", dtype=dtype, tolerance=tol)
        except GradeFailure as failure:
            named = diagnose(result, x, bias, dtype)
            if named:
                raise GradeFailure(f"{named}. {failure}", kind=failure.kind) from None
            raise

    return check


def _run(fn, x: torch.Tensor, bias: torch.Tensor, dtype: torch.dtype) -> None:
    checks.run_case(fn, {"x": x, "bias": bias}, _expect(x, bias, dtype), max_launches=1)


# --- correctness --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_matches_reference(learner_function, shape, dtype, rng, device):
    x = checks.randn(shape, dtype, rng, device)
    bias = checks.randn((shape[1],), dtype, rng, device)
    _run(learner_function, x, bias, dtype)


@pytest.mark.parametrize("shape", EXTREME_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_extreme_shapes(learner_function, shape, rng, device):
    x = checks.randn(shape, torch.float32, rng, device)
    bias = checks.randn((shape[1],), torch.float32, rng, device)
    _run(learner_function, x, bias, torch.float32)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
@pytest.mark.parametrize("case", STRIDED, ids=lambda c: f"{c[0]}x{c[1]}-stride{c[2]}")
def test_strided_rows(learner_function, case, dtype, rng, device):
    m, n, row_stride = case
    x = checks.with_row_stride(checks.randn((m, n), dtype, rng, device), row_stride)
    bias = checks.randn((n,), dtype, rng, device)
    _run(learner_function, x, bias, dtype)


@pytest.mark.parametrize("shape", BROADCAST, ids=lambda s: f"{s[0]}x{s[1]}")
def test_bias_broadcast(learner_function, shape, rng, device):
    # Small x, a large bias that differs from column to column: the bias decides most of the
    # answer, so a bias indexed by anything but the column cannot pass.
    x = checks.randn(shape, torch.float32, rng, device, scale=0.25)
    bias = checks.randn((shape[1],), torch.float32, rng, device, scale=3.0)
    _run(learner_function, x, bias, torch.float32)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_large_magnitudes(learner_function, dtype, rng, device):
    # |z| up to ~8000: GELU is z or 0 there; an exp-based formula overflows to inf or NaN.
    x = checks.randn((7, 129), dtype, rng, device, scale=LARGE_SCALE)
    bias = checks.randn((129,), dtype, rng, device, scale=LARGE_SCALE)
    _run(learner_function, x, bias, dtype)


# --- the byte model -----------------------------------------------------------------------------

@pytest.fixture
def learner_byte_model(learner):
    found = {}
    for name in ("fused_bytes", "unfused_bytes"):
        fn = getattr(learner, name, None)
        if not callable(fn):
            raise GradeFailure(f"your file does not define `{name}(m, n, element_size)`: keep the "
                               "functions the stub defines")
        found[name] = fn
    return found


@pytest.mark.parametrize("case", BYTE_MODEL_CASES, ids=lambda c: f"{c[0]}x{c[1]}-{checks.dtype_id(c[2])}")
def test_byte_model(learner_byte_model, case, check):
    m, n, dtype = case
    size = torch.empty((), dtype=dtype).element_size()
    fused, unfused = minimum_bytes(m, n, size), unfused_bytes(m, n, size)
    check.extra["byte_model"] = {
        "M": m, "N": n, "dtype": checks.dtype_id(dtype), "element_size": size,
        "fused_bytes": fused, "unfused_bytes": unfused, "bytes_ratio": round(unfused / fused, 4),
    }
    for name in ("fused_bytes", "unfused_bytes"):
        message = diagnose_byte_model(name, m, n, size, learner_byte_model[name](m, n, size))
        checks.require(message is None, message or "")


# --- performance (GPU only) ---------------------------------------------------------------------

def bench_rows(l2_bytes: int, free_bytes: int) -> int:
    """Rows of the 4096-wide fp32 benchmark input: at least 16384, and x + out at least 8 L2s;
    capped so x, out and the eager pair's intermediate fit in half the free memory."""
    want = max(BENCH_MIN_M, -(-8 * l2_bytes // (2 * BENCH_N * 4)))
    cap = (free_bytes // 2) // (4 * BENCH_N * 4)
    return max(1, min(want, cap))


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device``: 4096-wide fp32 rows, each input set's rows as the benchmark input had
    them, within a share of the free memory; the eager pair's two intermediates beside them."""
    from grader.judge import clock

    m, n = bench_rows(device.cache_bytes, free_bytes // (clock.SETS + 2)), BENCH_N
    one_set = (2 * m * n + n) * 4
    return plan.PerformanceInput(label=f"{m} x {n} fp32", dtype="fp32", data_bytes=minimum_bytes(m, n, 4),
                                 held_bytes=plan.timed_sets_bytes(one_set, free_bytes) + 2 * m * n * 4,
                                 sizes={"m": m, "n": n})


def show_inputs(size: str | None = None) -> ShowCase:
    """`grade show 2`: x of 4 x 300 float32 whose rows are 320 elements apart, and a bias of 300
    (``--size M,N,ROW_STRIDE``). The gaps between x's rows show a kernel that steps rows by N;
    the bias, re-read for every row, shows which program read which part of it."""
    m, n, stride = parse_size(size, (4, 300, 320), ("M (rows)", "N (columns)", "the row stride of x"), "4,300,320")
    if stride < n:
        raise ValueError(f"--size: the row stride ({stride}) must be at least N ({n})")
    rng = torch.Generator().manual_seed(0)
    x = checks.with_row_stride(checks.randn((m, n), torch.float32, rng, "cpu"), stride)
    bias = checks.randn((n,), torch.float32, rng, "cpu")
    return ShowCase({"x": x, "bias": bias}, label=f"x of {m} x {n} with rows {stride} apart, bias of {n}, float32")


def test_traffic(learner_function, rng, device):
    """Interpreter: the lesson of fusion in bytes. x is read once and out written once; x + bias never
    goes to memory. (The bias is re-read by every tile; a GPU serves those re-reads from L2, so only
    x's passes are held to the lesson, and the ratio is reported.)"""
    m, n = 7, 1031  # several column tiles, a ragged tail in both directions
    x = checks.randn((m, n), torch.float32, rng, device)
    bias = checks.randn((n,), torch.float32, rng, device)
    checks.expect_traffic(learner_function, {"x": x, "bias": bias}, minimum_bytes=minimum_bytes(m, n, 4),
                          max_passes={"x": 1.0}, lesson="a fused kernel reads x once; x + bias stays in registers")


def test_performance(exercise, learner_function, mode):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    import torch.nn.functional as F

    from grader import bandwidth
    from grader.judge import clock

    _, timed = plan.here(__file__)
    m, n = timed.sizes["m"], timed.sizes["n"]

    def make_set(generator):
        return [torch.randn(m, n, device="cuda", generator=generator),
                torch.randn(n, device="cuda", generator=generator)], {}

    def verify(out, args, kwargs):
        x, bias = args
        checks.require(bool(torch.allclose(out, F.gelu(x + bias), rtol=1e-4, atol=1e-5)),
                       f"`out` is wrong at the benchmark size {m} x {n} fp32")

    fused, unfused = minimum_bytes(m, n, 4), unfused_bytes(m, n, 4)
    # The eager pair by the same clock, first, so its time is known even when the kernel is under the floor.
    eager_ms = clock.time_local(lambda x, bias: F.gelu(x + bias), make_set).ms

    def eager_lines(record) -> list[str]:
        ms = record.ms
        record.details.update({
            "eager_ms": round(eager_ms, 5), "fused_bytes": fused, "unfused_bytes": unfused,
            "bytes_ratio": round(unfused / fused, 4), "time_ratio": round(eager_ms / ms, 4),
            "eager_gbps_moved": round(bandwidth.gbps(unfused, eager_ms), 1)})
        return [f"eager x + bias, then gelu: {eager_ms * 1000:.1f} µs moving {unfused / 1e6:.0f} MB "
                f"({bandwidth.gbps(unfused, eager_ms):.0f} GB/s on the bytes it moves)",
                f"your fused kernel: {ms * 1000:.1f} µs moving {fused / 1e6:.0f} MB; bytes ratio "
                f"{unfused / fused:.2f}x, time ratio {eager_ms / ms:.2f}x"]

    try:
        checks.measure_bandwidth(learner_function, make_set, nbytes=fused, floor=exercise.floor, verify=verify,
                                 label=timed.label, lines=eager_lines)
    except GradeFailure as failure:
        record = checks.record_of(learner_function)
        if record is None or record.performance is None:
            raise
        raise GradeFailure(f"{failure}. For comparison: your kernel took {record.performance.ms:.3f} ms for "
                           f"{fused / 1e6:.0f} MB, eager x + bias then gelu {eager_ms:.3f} ms for "
                           f"{unfused / 1e6:.0f} MB") from None
