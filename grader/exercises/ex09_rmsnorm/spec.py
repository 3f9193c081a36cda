"""Checks for exercise 9, RMSNorm forward and backward.

``rmsnorm_forward(x, weight, eps) -> (y, rstd)`` and ``rmsnorm_backward(dy, x, weight, rstd) ->
(dx, dweight)``; x and dy (M, N) with any row stride (contiguous along a row), N up to 16384,
fp32/fp16/bf16; weight (N,) of x's dtype; y and dx new tensors of x's dtype, rstd float32 (M,),
dweight of weight's dtype. One launch for the forward; at most two for the backward (the row
kernel and the reduction of its partial sums).

Byte model (also the learner's to write, as ``forward_bytes`` and ``backward_bytes``):

* forward, the minimum: read x (M·N) and weight (N), write y (M·N), all at the input's element
  size, and write rstd, one float32 per row: ``(2·M·N + N)·s + 4·M``;
* backward with P rows of float32 partial sums: the row kernel reads dy, x (M·N each), weight (N)
  and rstd (4·M), writes dx (M·N) and the partials (4·P·N); the reduction reads the partials back
  and writes dweight (N): ``(3·M·N + 2·N)·s + 4·M + 8·P·N``. With P = 0 it is the minimum any
  backward must move, which is what the performance check credits (`backward_minimum_bytes`).

The learner also writes ``partial_count(n_rows, num_sms, programs_per_sm)``, checked on hand
cases, and the backward's grid must be what it gives (for some programs_per_sm from 1 to 16) on
this GPU's SM count (the interpreter's stand-in: 4 SMs, as the stub's INTERPRETER_SMS).

The reference is float64. Inputs are built so that each known mistake shows: rows of very different
scales (so rstd differs from row to row), gradients correlated with x̂ (so the term through rstd
is large), weights far from 1, rows of tiny values and of zeros (where eps decides), float16
rows whose sum of squares passes 65504, and an rstd made with a large eps (so a backward that
recomputes it cannot match). When an output is wrong, the checks recompute the answer the way
each known mistake computes it and name the one the output matches.

dweight's determinism: on a GPU the backward runs three times on the same input and the outputs
must agree bit for bit; in the interpreter (which runs programs one at a time, so atomics are
deterministic there) the traffic counter sees atomics and names them.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import pytest
import torch

from grader import catalogue, plan
from grader.judge import checks
from grader.wire import guards
from grader.judge.compare import DEFAULT_TOLERANCES, Tolerance, dtype_name, expect_close
from grader.wire.failures import GradeFailure


#: The eps of the ordinary cases (Llama's); the cases where eps decides set their own.
EPS = 1e-6
#: The longest row the contract asks for (the manifest's `constants`).
MAX_COLS = catalogue.of_spec(__file__).constants["MAX_COLS"]
#: The interpreter's stand-in SM count (the stub's INTERPRETER_SMS).
INTERPRETER_SMS = 4
#: programs_per_sm values a launcher may have used: the grid check accepts any of them.
PROGRAMS_PER_SM_RANGE = range(1, 17)
#: float16's largest finite value: a sum of squares beyond it is inf.
FP16_MAX = 65504.0

#: (id, (M, N) in the interpreter, (M, N) on a GPU): single elements, odd sizes around the
#: 128/1024/4096 blocks, primes; on a GPU the last ones have thousands of rows.
FORWARD_SHAPES = [
    ("1x1", (1, 1), (1, 1)), ("3x127", (3, 127), (3, 127)), ("7x129", (7, 129), (7, 129)),
    ("5x1025", (5, 1025), (5, 1025)), ("rows_x781", (17, 781), (4099, 781)),
    ("rows_x4097", (2, 4097), (1031, 4097)),
]
BACKWARD_SHAPES = [
    ("1x1", (1, 1), (1, 1)), ("3x5", (3, 5), (3, 5)), ("37x129", (37, 129), (37, 129)),
    ("5x1025", (5, 1025), (5, 1025)), ("rows_x781", (19, 781), (4099, 781)),
    ("rows_x4097", (2, 4097), (1031, 4097)),
]
#: (M, N, row stride of x, row stride of dy): gaps between rows, different for x and dy.
STRIDED = {"interpreter": (9, 129, 133, 160), "gpu": (1031, 1025, 1040, 1100)}
LONGEST = {"interpreter": (2, MAX_COLS), "gpu": (263, MAX_COLS)}
#: Rows of tiny values and of zeros, where eps decides rstd.
SMALL_ROWS = {"interpreter": (6, 193), "gpu": (1030, 193)}
SMALL_EPS = 1e-5
#: The rstd handed to the backward in `test_backward_uses_given_rstd` is made with this eps on rows
#: of magnitude 0.05 to 0.5, so a backward that recomputes rstd (with any usual eps) cannot match.
GIVEN_RSTD_EPS = 0.1
GIVEN_RSTD_SHAPE = {"interpreter": (7, 129), "gpu": (1031, 1025)}
#: float16 rows whose sum of squares passes 65504 (values of magnitude ~24 over 257 columns: the
#: squares sum to ~1.5e5) beside ordinary rows.
LARGE_ROWS = {"interpreter": (4, 257), "gpu": (1024, 257)}
#: Row counts of the grid check: fewer rows than the interpreter's 4 SMs, a few per program, and
#: more rows than 16 programs per SM could take one each (so a grid of one program per row shows).
GRID_ROWS = {"few_rows": {"interpreter": 3, "gpu": 3}, "some_rows": {"interpreter": 37, "gpu": 1000},
             "many_rows": {"interpreter": 150, "gpu": 40000}}
GRID_COLS = 33
#: The determinism check on a GPU: many programs adding into the same columns, three runs.
DETERMINISM_SHAPE = {"interpreter": (64, 33), "gpu": (16384, 1024)}
DETERMINISM_RUNS = 3
#: The traffic checks (interpreter): several programs, a ragged tail.
TRAFFIC_FORWARD = (13, 781)
TRAFFIC_BACKWARD = (100, 33)
#: The performance check: rows of 4096 bf16 (the shape the targets name), at least 16384 of them.
BENCH_N = 4096
BENCH_MIN_M = 16384
#: The backward's floor, beside the manifest's floor for the forward (its `floor.reason` says why).
BACKWARD_FLOOR = 0.60

#: (n_rows, num_sms, programs_per_sm, expected) for partial_count, each worked out by hand:
PARTIAL_CASES = [
    # 264 slots; ceil(16384 / 264) = 63 rows each; ceil(16384 / 63) = 261 programs (not 264).
    ("h200", 16384, 132, 2, 261),
    # 1056 slots; ceil(16384 / 1056) = 16 rows each; 16384 / 16 = 1024 programs exactly.
    ("h200_8_per_sm", 16384, 132, 8, 1024),
    # Fewer rows than slots: one row each, one program per row.
    ("few_rows", 100, 132, 2, 100),
    ("one_row", 1, 132, 4, 1),
    # 265 rows on 264 slots: two rows each, so 133 programs; 264 would leave 131 without a row.
    ("one_row_over", 265, 132, 2, 133),
    # The interpreter's stand-in: 4 SMs x 4 = 16 slots; ceil(37 / 16) = 3 rows each; 13 programs.
    ("interpreter", 37, 4, 4, 13),
    # A laptop GPU (RTX 3050: 20 SMs): 80 slots; ceil(1000 / 80) = 13 rows each; 77 programs.
    ("laptop_gpu", 1000, 20, 4, 77),
]
PARTIAL_COUNT_SIGNATURE = "partial_count(n_rows, num_sms, programs_per_sm)"

#: (M, N, dtype, n_partials) on which the learner's byte model must agree exactly with ours.
BYTE_MODEL_CASES = [(16384, 4096, torch.bfloat16, 261), (4099, 781, torch.float32, 528),
                    (1, 1, torch.float16, 1), (127, 16384, torch.float32, 127), (3, 5, torch.bfloat16, 3)]


# --- the byte model -----------------------------------------------------------------------------

def forward_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes the forward can move: read x and weight, write y (element_size each), write
    rstd (float32, 4 bytes per row)."""
    return (2 * m * n + n) * element_size + 4 * m


def backward_bytes(m: int, n: int, element_size: int, n_partials: int) -> int:
    """Bytes the backward's two kernels move with ``n_partials`` rows of float32 partial sums."""
    return (3 * m * n + 2 * n) * element_size + 4 * m + 8 * n_partials * n


def minimum_bytes(m: int, n: int, element_size: int) -> int:
    """The forward's minimum (the manifest's function is the forward; `grade bench 9` uses it)."""
    return forward_bytes(m, n, element_size)


def backward_minimum_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes any backward can move: read dy, x, weight, rstd; write dx and dweight."""
    return backward_bytes(m, n, element_size, 0)


def _byte_model_mistakes(name: str, m: int, n: int, s: int, p: int) -> list[tuple[int, str]]:
    """Counts that come from a known mistake, with the sentence that names it."""
    mn = m * n
    if name == "forward_bytes":
        return [
            (2 * mn + n + m, "that counts elements, not bytes: multiply x, weight and y by element_size, and rstd "
                             "by 4 (it is float32)"),
            ((2 * mn + n) * s, "rstd is missing: the forward also writes one float32 per row (4·M bytes)"),
            ((2 * mn + n + m) * s, "rstd is counted at x's element size: it is float32, 4 bytes per row "
                                   "whatever x is"),
            (2 * mn * s + 4 * m, "the weight is missing: the forward reads its N elements"),
            (3 * mn * s + 4 * m, "that reads the weight once per row (M·N elements): it has only N, read from HBM "
                                 "once and found in L2 by every later row"),
            ((3 * mn + n) * s + 4 * m, "that reads x twice (once for the statistics, once to scale): one program "
                                       "holds its row in registers between the two, so x crosses HBM once"),
        ]
    right = backward_bytes(m, n, s, p)
    return [
        (backward_bytes(m, n, s, 0), "the partial sums are missing: the row kernel writes n_partials rows of N "
                                     "float32 values and the reduction reads them back (8·n_partials·N bytes)"),
        (right - 4 * p * n, "the partial sums are counted once: the row kernel writes them and the reduction "
                            "reads them back, 4·n_partials·N bytes each way"),
        (right - 8 * p * n + 2 * p * n * s,
         "the partial sums are counted at x's element size: they are float32, 4 bytes each, whatever x is"),
        (right - 4 * m, "rstd is missing: the row kernel reads one float32 per row"),
        (right - 4 * m + m * s, "rstd is counted at x's element size: it is float32, 4 bytes per row"),
        (right - n * s, "one of weight or dweight is missing: the row kernel reads the N weights and the "
                        "reduction writes the N elements of dweight"),
        (right - 2 * n * s, "weight and dweight are missing: N elements each"),
        (right + mn * s, "that reads y too: the backward needs x, dy, weight and rstd, not the forward's output"),
        (right + (m - 1) * n * s, "that reads the weight once per row: it is N elements, from L2 after the first"),
        (right + 2 * mn * s, "that reads x and dy twice: the partial sums of dweight come from the same pass as "
                             "dx, so each row crosses HBM once"),
        ((3 * mn + 2 * n) + m + 2 * p * n, "that counts elements, not bytes: multiply by element_size (4 for "
                                           "rstd and the float32 partial sums)"),
    ]


def diagnose_byte_model(name: str, value, m: int, n: int, s: int, p: int | None = None) -> str | None:
    """None when ``value`` is the right count; otherwise the sentence the learner reads."""
    right = forward_bytes(m, n, s) if name == "forward_bytes" else backward_bytes(m, n, s, p)
    call = f"`{name}({m}, {n}, {s}{'' if p is None else f', {p}'})`"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{call} returned {value!r} ({type(value).__name__}); it must return a number of bytes (an int)"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return f"{call} returned {value!r}; a count of bytes is a whole number"
    if int(value) == right:
        return None
    what = "the forward moves at least" if name == "forward_bytes" else "the backward's two kernels move"
    message = f"{call} returned {int(value):,} but {what} {right:,} bytes"
    mistakes = _byte_model_mistakes(name, m, n, s, p or 0)
    named = list(dict.fromkeys(reason for count, reason in mistakes if count == int(value) and count != right))
    if named:  # two mistakes can give the same count (4-byte partials at a 2-byte element size): say both
        return f"{message}: " + "; or ".join(named)
    if name == "forward_bytes":
        return (f"{message}: read x (M·N) and weight (N), write y (M·N), times element_size; and rstd, "
                "4 bytes per row")
    return (f"{message}: the row kernel reads dy and x (M·N each), weight (N) and rstd (4 bytes per row), writes "
            "dx (M·N) and the partial sums (n_partials·N float32); the reduction reads the partial sums and "
            "writes dweight (N)")


# --- references --------------------------------------------------------------------------------

def reference_forward(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd) in float64 on the CPU."""
    x64, w64 = x.detach().double().cpu(), weight.detach().double().cpu()
    rstd = 1.0 / torch.sqrt((x64 * x64).mean(dim=1) + eps)
    return x64 * rstd[:, None] * w64, rstd


def _backward64(dy64, x64, w64, r64, *, n_mean: int | None = None, with_weight: bool = True,
                with_rstd_term: bool = True, final_rstd: bool = True):
    """dx and dweight in float64 from float64 inputs, with switches for the known mistakes."""
    n = x64.shape[1] if n_mean is None else n_mean
    x_hat = x64 * r64[:, None]
    g = dy64 * w64 if with_weight else dy64
    c = (x_hat * g).sum(dim=1, keepdim=True) / n
    inner = g - x_hat * c if with_rstd_term else g
    dx = inner * r64[:, None] if final_rstd else inner
    return dx, (dy64 * x_hat).sum(dim=0)


def reference_backward(dy, x, weight, rstd):
    """(dx, dweight) in float64 on the CPU, from the rstd given to the learner."""
    return _backward64(dy.detach().double().cpu(), x.detach().double().cpu(), weight.detach().double().cpu(),
                       rstd.detach().double().cpu())


def _dx_scale(dy, x, weight, rstd) -> torch.Tensor:
    """Per row, the size of the two terms dx is the difference of, rstd · max(|g| + |x̂ · c|): a
    float32 kernel's rounding error is a fraction of that, however small dx itself comes out."""
    dy64, x64, w64, r64 = (t.detach().double().cpu() for t in (dy, x, weight, rstd))
    x_hat = x64 * r64[:, None]
    g = dy64 * w64
    c = (x_hat * g).sum(dim=1, keepdim=True) / x64.shape[1]
    return ((g.abs() + (x_hat * c).abs()) * r64[:, None]).amax(dim=1, keepdim=True)


def _dw_scale(dy, x, rstd) -> torch.Tensor:
    """Per column, Σ_rows |dy · x̂|: a float32 sum's rounding error is a fraction of that."""
    dy64, x64, r64 = (t.detach().double().cpu() for t in (dy, x, rstd))
    return (dy64 * x64 * r64[:, None]).abs().sum(dim=0)


# --- tolerances and comparison ------------------------------------------------------------------

#: rstd is float32 from exact inputs: a few ulp of the sum of squares and of rsqrt.
RSTD_RTOL = 2e-5
#: dx: the dtype's rtol, and an atol relative to each row's `_dx_scale`.
DX_ATOL = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 8e-3}
#: dweight: the dtype's rtol, and an atol relative to each column's Σ|dy · x̂| (`_dw_scale`).
#: float32 sums of a few thousand terms are off by ~sqrt(M)·6e-8 of that, in any order. In 16 bits,
#: a kernel that rounds x̂ to the input's dtype before the product (Hugging Face Llama's order, and
#: Liger-Kernel's "llama" casting: grader/exercises/ex09_rmsnorm/natural/hf_casting.py) is off by up to one rounding of
#: each term, 2^-11 (fp16) or 2^-8 (bf16) of Σ|dy · x̂|: twice that is allowed.
DW_ATOL = {torch.float32: 1e-5, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def _within(got: torch.Tensor, want: torch.Tensor, rtol: float, bound_scale: torch.Tensor | float) -> torch.Tensor:
    """Elementwise: |got - want| <= rtol·|want| + bound_scale, NaN matching NaN, infinities exactly."""
    finite = torch.isfinite(want)
    special = (torch.isnan(got) & torch.isnan(want)) | ((got == want) & ~finite)
    close = (got - want).abs() <= rtol * want.abs() + bound_scale
    return special | (close & finite)


def _structure(out, want: torch.Tensor, name: str, dtype: torch.dtype) -> None:
    """Shape, dtype, unwritten elements, NaN and infinities: `grader.judge.compare`'s sentences."""
    expect_close(out, want, name=name, dtype=dtype, tolerance=Tolerance(rtol=math.inf, atol=math.inf))


def _expect_values(out: torch.Tensor, want: torch.Tensor, *, name: str, rtol: float,
                   bound_scale: torch.Tensor | float, what: str) -> None:
    got = out.detach().double().cpu()
    bad = ~_within(got, want, rtol, bound_scale)
    if not bool(bad.any()):
        return
    positions = bad.nonzero().tolist()
    shown = "; ".join(f"{name}[{', '.join(map(str, p))}] = {got[tuple(p)].item():.6g} but expected "
                      f"{want[tuple(p)].item():.6g}" for p in positions[:3])
    more = f"; and {len(positions) - 3} more" if len(positions) > 3 else ""
    raise GradeFailure(f"{len(positions)} of {want.numel()} elements of `{name}` differ from the float64 reference "
                       f"beyond the {dtype_name(out.dtype)} tolerance ({what}): {shown}{more}")


def _y_tolerance(dtype: torch.dtype) -> Tolerance:
    return DEFAULT_TOLERANCES[dtype]


def _check_y(out, want: torch.Tensor, dtype: torch.dtype) -> None:
    _structure(out, want, "y", dtype)
    tol = _y_tolerance(dtype)
    finite = want[torch.isfinite(want)]
    scale = (finite.abs().max().item() if finite.numel() else 1.0) or 1.0
    _expect_values(out, want, name="y", rtol=tol.rtol, bound_scale=tol.atol * scale,
                   what=f"rtol {tol.rtol:g}, atol {tol.atol:g} x max|y|")


def _check_rstd(out, want: torch.Tensor) -> None:
    _structure(out, want, "rstd", torch.float32)
    _expect_values(out, want, name="rstd", rtol=RSTD_RTOL, bound_scale=0.0, what=f"rtol {RSTD_RTOL:g}")


def _check_dx(out, want: torch.Tensor, dtype: torch.dtype, scale: torch.Tensor) -> None:
    _structure(out, want, "dx", dtype)
    rtol = DEFAULT_TOLERANCES[dtype].rtol
    _expect_values(out, want, name="dx", rtol=rtol, bound_scale=DX_ATOL[dtype] * scale,
                   what=f"rtol {rtol:g}, atol {DX_ATOL[dtype]:g} x the row's largest rstd·(|dy·w| + |x̂·c|)")


def _check_dweight(out, want: torch.Tensor, dtype: torch.dtype, scale: torch.Tensor) -> None:
    _structure(out, want, "dweight", dtype)
    rtol = DEFAULT_TOLERANCES[dtype].rtol
    _expect_values(out, want, name="dweight", rtol=rtol, bound_scale=DW_ATOL[dtype] * scale,
                   what=f"rtol {rtol:g}, atol {DW_ATOL[dtype]:g} x the column's sum of |dy·x̂|")


def _pair(result, names: tuple[str, str], function: str) -> tuple[Any, Any]:
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        got = type(result).__name__ if not isinstance(result, (tuple, list)) else f"{len(result)} values"
        raise GradeFailure(f"`{function}` must return two tensors, ({names[0]}, {names[1]}); it returned {got}")
    return result[0], result[1]


# --- diagnosis: the answers of known mistakes -----------------------------------------------------

def _blocks_above(n: int) -> list[int]:
    """Power-of-two block widths with masked lanes for rows of n columns, up to the longest block."""
    block = 1 << max(0, (n - 1).bit_length())
    if block == n:
        block *= 2
    found = []
    while block <= max(2 * MAX_COLS, 2 * n):
        found.append(block)
        block *= 2
    return found


def _forward_mistakes(x: torch.Tensor, weight: torch.Tensor, eps: float):
    """(sentence, rstd, y) of each known mistake, in float64."""
    x64, w64 = x.detach().double().cpu(), weight.detach().double().cpu()
    n = x64.shape[1]
    sum_sq = (x64 * x64).sum(dim=1)
    mean_sq = sum_sq / n
    right = 1.0 / torch.sqrt(mean_sq + eps)
    found = []

    def add(sentence, rstd, y=None, rstd_rtol=4 * RSTD_RTOL):
        found.append((sentence, rstd, x64 * rstd[:, None] * w64 if y is None else y, rstd_rtol))

    add("eps is added outside the square root: rstd = 1 / (sqrt(mean(x²)) + eps) where RMSNorm computes "
        "1 / sqrt(mean(x²) + eps). It matters where the mean of squares is as small as eps (rows of tiny "
        "values, padding rows of zeros)", 1.0 / (torch.sqrt(mean_sq) + eps))
    no_eps = 1.0 / torch.sqrt(mean_sq)  # inf on a row of zeros
    add("eps is missing: rstd = 1 / sqrt(mean(x²)) is infinite on a row of zeros (and y there 0 · inf = NaN); "
        "add eps inside the square root, rstd = 1 / sqrt(mean(x²) + eps)", no_eps)
    add("the sum of squares is not divided by N: rstd = 1 / sqrt(sum(x²) + eps) where RMSNorm uses the mean, "
        "sum(x²) / N", 1.0 / torch.sqrt(sum_sq + eps))
    for block in _blocks_above(n):
        add(f"the mean of squares is divided by the block width {block}, not by N = {n}: the {block - n} masked "
            "lanes of the block are not part of the row, so they must count neither in the sum (load them as 0) "
            f"nor in the division (divide by n_cols)", 1.0 / torch.sqrt(sum_sq / block + eps))
    if x.dtype == torch.float16:
        overflow = sum_sq > FP16_MAX
        if bool(overflow.any()):
            in_fp16 = torch.where(overflow, torch.zeros_like(right), right)
            # Elsewhere a float16 sum is off by a few of its ulps: rstd to about 1e-3, not float32's 1e-5.
            add("the statistics look computed in float16: in rows whose sum of squares passes 65504 (float16's "
                "largest value) it is inf and rstd = 0, so y = 0 there. Convert x with `.to(tl.float32)` before "
                "squaring, and sum in float32", in_fp16, rstd_rtol=4e-3)
    add("y is missing the weight: y = x · rstd · weight, one weight per column", right, x64 * right[:, None])
    add("rstd holds the RMS, sqrt(mean(x²) + eps), not its inverse: the backward multiplies by rstd = "
        "1 / sqrt(mean(x²) + eps)", 1.0 / right, x64 * right[:, None] * w64)
    return found


def diagnose_forward(y, rstd, x: torch.Tensor, weight: torch.Tensor, eps: float) -> str | None:
    """The known mistake whose (y, rstd) the learner's output matches, as a sentence; or None."""
    if not all(isinstance(t, torch.Tensor) for t in (y, rstd)) or tuple(y.shape) != tuple(x.shape) \
            or tuple(rstd.shape) != (x.shape[0],):
        return None
    if bool(guards.is_poison(y.detach()).any()) or bool(guards.is_poison(rstd.detach()).any()):
        return None  # unwritten elements: compare's sentence says it better
    want_y, want_r = reference_forward(x, weight, eps)
    got_y, got_r = y.detach().double().cpu(), rstd.detach().double().cpu()
    tol = _y_tolerance(y.dtype)

    def y_close(a, b):
        finite = b[torch.isfinite(b)]
        scale = (finite.abs().max().item() if finite.numel() else 1.0) or 1.0
        return bool(_within(a, b, 2 * tol.rtol, 2 * tol.atol * scale).all())

    def r_close(a, b, rtol=4 * RSTD_RTOL):
        return bool(_within(a, b, rtol, 0.0).all())

    for sentence, cand_r, cand_y, rstd_rtol in _forward_mistakes(x, weight, eps):
        cand_y = cand_y.to(y.dtype).double()  # the learner's y is rounded to its dtype
        if y_close(cand_y, want_y) and r_close(cand_r, want_r):
            continue  # this mistake gives the right answer on this input: it explains nothing
        if y_close(got_y, cand_y) and r_close(got_r, cand_r, rstd_rtol):
            return sentence
    return None


def _backward_mistakes(dy, x, weight, rstd):
    """(sentence, dx, dweight) of each known mistake, in float64."""
    dy64, x64, w64, r64 = (t.detach().double().cpu() for t in (dy, x, weight, rstd))
    n = x64.shape[1]
    right_dx, right_dw = _backward64(dy64, x64, w64, r64)
    found = [
        ("dx is missing the term through rstd: rstd depends on every x_j of the row (d rstd / d x_j = "
         "-rstd³ · x_j / N), which adds -x̂ · mean(x̂ · dy · w) inside the bracket: dx = rstd · (g - x̂ · "
         "mean(x̂ · g)) with g = dy · w", _backward64(dy64, x64, w64, r64, with_rstd_term=False)[0], right_dw),
        ("dx looks computed without the weight: the gradient reaching x̂ is g = dy · w, in both terms, "
         "dx = rstd · (g - x̂ · mean(x̂ · g))", _backward64(dy64, x64, w64, r64, with_weight=False)[0], right_dw),
        ("the term through rstd is not divided by N: it is x̂ times the mean of x̂ · g over the row, "
         "sum(x̂ · g) / N", _backward64(dy64, x64, w64, r64, n_mean=1)[0], right_dw),
        ("dx is missing the final factor rstd: dx = rstd · (g - x̂ · mean(x̂ · g))",
         _backward64(dy64, x64, w64, r64, final_rstd=False)[0], right_dw),
        ("dweight is missing rstd: y = x̂ · w with x̂ = x · rstd, so dweight = Σ_rows dy · x · rstd",
         right_dx, (dy64 * x64).sum(dim=0)),
        ("dweight is multiplied by the weight: the derivative of y = x̂ · w with respect to w is x̂, so "
         "dweight = Σ_rows dy · x̂, with no w in it", right_dx, (dy64 * x64 * r64[:, None] * w64).sum(dim=0)),
    ]
    for block in _blocks_above(n):
        found.append((f"the mean of x̂ · g is divided by the block width {block}, not by N = {n}: the masked "
                      "lanes are not part of the row",
                      _backward64(dy64, x64, w64, r64, n_mean=block)[0], right_dw))
    sum_sq = (x64 * x64).sum(dim=1)
    for eps in (1e-6, 1e-5):
        again = 1.0 / torch.sqrt(sum_sq / n + eps)
        dx_again, dw_again = _backward64(dy64, x64, w64, again)
        found.append(("your backward does not use the rstd it was given: dx and dweight match an rstd recomputed "
                      f"from x with a small eps ({eps:g} fits), but the forward's rstd was made with its own eps, "
                      "which the backward is not told (here 0.1). The forward saved rstd in float32 exactly so "
                      "the backward would load it: rstd = tl.load(rstd_ptr + row)", dx_again, dw_again))
    return found


def diagnose_backward(dx, dweight, dy, x, weight, rstd) -> str | None:
    """The known mistake whose (dx, dweight) the learner's output matches, as a sentence; or None."""
    if not all(isinstance(t, torch.Tensor) for t in (dx, dweight)) or tuple(dx.shape) != tuple(x.shape) \
            or tuple(dweight.shape) != tuple(weight.shape):
        return None
    if bool(guards.is_poison(dx.detach()).any()) or bool(guards.is_poison(dweight.detach()).any()):
        return None
    want_dx, want_dw = reference_backward(dy, x, weight, rstd)
    dx_scale, dw_scale = _dx_scale(dy, x, weight, rstd), _dw_scale(dy, x, rstd)
    got_dx, got_dw = dx.detach().double().cpu(), dweight.detach().double().cpu()
    rtol_x, rtol_w = 2 * DEFAULT_TOLERANCES[dx.dtype].rtol, 2 * DEFAULT_TOLERANCES[dweight.dtype].rtol

    def dx_close(a, b):
        return bool(_within(a, b, rtol_x, 2 * DX_ATOL[dx.dtype] * dx_scale).all())

    def dw_close(a, b):
        return bool(_within(a, b, rtol_w, 2 * DW_ATOL[dweight.dtype] * dw_scale).all())

    for sentence, cand_dx, cand_dw in _backward_mistakes(dy, x, weight, rstd):
        cand_dx, cand_dw = cand_dx.to(dx.dtype).double(), cand_dw.to(dweight.dtype).double()
        if dx_close(cand_dx, want_dx) and dw_close(cand_dw, want_dw):
            continue
        if dx_close(got_dx, cand_dx) and dw_close(got_dw, cand_dw):
            return sentence
    return None


# --- running the learner's functions ------------------------------------------------------------

def _learner_call(learner, name: str, signature: str, *args):
    fn = getattr(learner, name, None)
    if not callable(fn):
        raise GradeFailure(f"your file does not define `{name}`: keep the functions the stub defines ({signature})")
    try:
        return fn(*args)
    except GradeFailure as failure:  # the learner's exception, as a sentence and a class name
        if failure.raised == "TypeError":
            raise GradeFailure(f"`{name}` {str(failure).removeprefix('your code ')}. Keep the stub's signature: "
                               f"{signature}") from None
        raise


def _backward_function(learner) -> Callable:
    fn = getattr(learner, "rmsnorm_backward", None)
    if not callable(fn):
        raise GradeFailure("your file does not define `rmsnorm_backward`: keep the functions the stub defines "
                           "(rmsnorm_backward(dy, x, weight, rstd) -> (dx, dweight))")
    return fn


def expect_forward(x: torch.Tensor, weight: torch.Tensor, eps: float) -> Callable[[Any], None]:
    """A `run_case` check of ``(y, rstd)``, naming the known mistake on a mismatch."""
    want_y, want_r = reference_forward(x, weight, eps)

    def check(result) -> None:
        y, rstd = _pair(result, ("y", "rstd"), "rmsnorm_forward")
        try:
            _check_y(y, want_y, x.dtype)
            _check_rstd(rstd, want_r)
        except GradeFailure as failure:
            named = diagnose_forward(y, rstd, x, weight, eps)
            if named:
                raise GradeFailure(f"{named}. {failure}") from None
            raise

    return check


def expect_backward(dy, x, weight, rstd) -> Callable[[Any], None]:
    """A `run_case` check of ``(dx, dweight)``, naming the known mistake on a mismatch."""
    want_dx, want_dw = reference_backward(dy, x, weight, rstd)
    dx_scale, dw_scale = _dx_scale(dy, x, weight, rstd), _dw_scale(dy, x, rstd)

    def check(result) -> None:
        dx, dweight = _pair(result, ("dx", "dweight"), "rmsnorm_backward")
        try:
            _check_dx(dx, want_dx, x.dtype, dx_scale)
            _check_dweight(dweight, want_dw, weight.dtype, dw_scale)
        except GradeFailure as failure:
            named = diagnose_backward(dx, dweight, dy, x, weight, rstd)
            if named:
                raise GradeFailure(f"{named}. {failure}") from None
            raise

    return check


def run_forward(fn, x, weight, eps) -> checks.CaseReport:
    return checks.run_case(fn, {"x": x, "weight": weight, "eps": eps}, expect_forward(x, weight, eps),
                           out_name=("y", "rstd"), max_launches=1)


def run_backward(fn, dy, x, weight, rstd, *, allow_fill: bool = False) -> checks.CaseReport:
    return checks.run_case(fn, {"dy": dy, "x": x, "weight": weight, "rstd": rstd},
                           expect_backward(dy, x, weight, rstd), out_name=("dx", "dweight"), max_launches=2,
                           allow_fill=allow_fill)


# --- inputs -----------------------------------------------------------------------------------

def rows_of_scales(shape, dtype, rng, device, *, low: float = 0.25, high: float = 4.0) -> torch.Tensor:
    """Normal values, each row scaled by its own factor between ``low`` and ``high`` (log-uniform):
    rstd differs from row to row, so a mistake in it cannot hide in a common factor."""
    m, n = shape
    data = torch.randn((m, n), generator=rng, dtype=torch.float32)
    logs = math.log(low) + torch.rand((m, 1), generator=rng) * (math.log(high) - math.log(low))
    return (data * torch.exp(logs)).to(dtype).to(device)


def weights(n: int, dtype, rng, device) -> torch.Tensor:
    """1 + 0.5 · normal: far enough from 1 that a forgotten weight shows, some of them negative."""
    return (1.0 + 0.5 * torch.randn((n,), generator=rng, dtype=torch.float32)).to(dtype).to(device)


def rstd_of(x: torch.Tensor, eps: float) -> torch.Tensor:
    """The float32 rstd a correct forward returns for x (computed in float64, rounded once)."""
    return reference_forward(x, torch.ones(x.shape[1], dtype=torch.float64), eps)[1].float().to(x.device)


def upstream_gradient(x: torch.Tensor, rstd: torch.Tensor, rng, device) -> torch.Tensor:
    """dy = normal noise + x̂: correlated with x̂, so mean(x̂ · g) is of order 1 and the term of dx
    through rstd is as large as the rest (with independent noise it would be ~1/sqrt(N) of it)."""
    m, n = x.shape
    noise = torch.randn((m, n), generator=rng, dtype=torch.float32)
    x_hat = x.detach().float().cpu() * rstd.detach().float().cpu()[:, None]
    return (noise + x_hat).to(x.dtype).to(device)


def backward_inputs(shape, dtype, rng, device, *, eps: float = EPS):
    x = rows_of_scales(shape, dtype, rng, device)
    weight = weights(shape[1], dtype, rng, device)
    rstd = rstd_of(x, eps)
    return upstream_gradient(x, rstd, rng, device), x, weight, rstd


def _cases(table: list, dtypes=checks.FLOAT_DTYPES):
    """(shapes, dtype) for every shape of ``table`` and dtype; the mode picks the shape."""
    return [pytest.param({"interpreter": interpreter, "gpu": gpu}, dtype, id=f"{name}-{checks.dtype_id(dtype)}")
            for name, interpreter, gpu in table for dtype in dtypes]


# --- the hand cases, without a GPU ----------------------------------------------------------------

@pytest.mark.parametrize("case", PARTIAL_CASES, ids=lambda c: c[0])
def test_partial_count(learner, case):
    _name, n_rows, num_sms, per_sm, expected = case
    shown = f"partial_count(n_rows={n_rows}, num_sms={num_sms}, programs_per_sm={per_sm})"
    got = _learner_call(learner, "partial_count", PARTIAL_COUNT_SIGNATURE, n_rows, num_sms, per_sm)
    if isinstance(got, bool) or not isinstance(got, int) and not (isinstance(got, float) and got.is_integer()):
        raise GradeFailure(f"{shown} returned {got!r}, not a whole number of programs")
    got = int(got)
    if got == expected:
        return
    slots = num_sms * per_sm
    rows_each = -(-n_rows // slots)
    if got == min(n_rows, slots):
        why = (f"{slots} slots give each program ceil({n_rows} / {slots}) = {rows_each} consecutive rows, and "
               f"ceil({n_rows} / {rows_each}) = {expected} programs cover them all; the other "
               f"{got - expected} would have no row to work on, yet each would write a row of partial sums")
    elif got == slots:
        why = f"never more programs than rows, and none without a row: {n_rows} rows need {expected}"
    else:
        why = (f"rows_per_program = ceil(n_rows / (num_sms * programs_per_sm)) = {rows_each}, then "
               f"ceil(n_rows / rows_per_program) = {expected}")
    raise GradeFailure(f"{shown} returned {got}, expected {expected}: {why}")


@pytest.mark.parametrize("case", BYTE_MODEL_CASES,
                         ids=lambda c: f"{c[0]}x{c[1]}-{checks.dtype_id(c[2])}-p{c[3]}")
def test_byte_model(learner, case, check):
    m, n, dtype, p = case
    size = torch.empty((), dtype=dtype).element_size()
    forward = _learner_call(learner, "forward_bytes", "forward_bytes(m, n, element_size)", m, n, size)
    backward = _learner_call(learner, "backward_bytes", "backward_bytes(m, n, element_size, n_partials)",
                             m, n, size, p)
    check.extra["byte_model"] = {
        "M": m, "N": n, "dtype": checks.dtype_id(dtype), "element_size": size, "n_partials": p,
        "forward_bytes": forward_bytes(m, n, size), "backward_bytes": backward_bytes(m, n, size, p),
        "backward_minimum_bytes": backward_minimum_bytes(m, n, size),
    }
    for message in (diagnose_byte_model("forward_bytes", forward, m, n, size),
                    diagnose_byte_model("backward_bytes", backward, m, n, size, p)):
        checks.require(message is None, message or "")


# --- the forward ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,dtype", _cases(FORWARD_SHAPES))
def test_forward(learner_function, shapes, dtype, rng, device, mode):
    shape = shapes[mode]
    run_forward(learner_function, rows_of_scales(shape, dtype, rng, device), weights(shape[1], dtype, rng, device),
                EPS)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_forward_strided(learner_function, dtype, rng, device, mode):
    m, n, x_stride, _ = STRIDED[mode]
    x = checks.with_row_stride(rows_of_scales((m, n), dtype, rng, device), x_stride)
    run_forward(learner_function, x, weights(n, dtype, rng, device), EPS)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=checks.dtype_id)
def test_forward_longest_row(learner_function, dtype, rng, device, mode):
    shape = LONGEST[mode]
    run_forward(learner_function, rows_of_scales(shape, dtype, rng, device), weights(shape[1], dtype, rng, device),
                EPS)


def small_rows(shape, dtype, rng, device) -> torch.Tensor:
    """Rows where eps decides: row 0 all zeros (a padding token), then rows of magnitude 1e-3, 3e-3,
    1e-2 (mean of squares 1e-6 to 1e-4, against eps = 1e-5) and ordinary rows, in turn."""
    m, n = shape
    data = torch.randn((m, n), generator=rng, dtype=torch.float32)
    scales = torch.tensor([0.0, 1e-3, 3e-3, 1e-2, 1.0])[torch.arange(m) % 5]
    return (data * scales[:, None]).to(dtype).to(device)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_forward_eps(learner_function, dtype, rng, device, mode):
    shape = SMALL_ROWS[mode]
    run_forward(learner_function, small_rows(shape, dtype, rng, device), weights(shape[1], dtype, rng, device),
                SMALL_EPS)


def large_rows(shape, dtype, rng, device) -> torch.Tensor:
    """Even rows of magnitude 24 (squares up to ~1e4, summing past 65504 over 257 columns), odd rows
    ordinary: statistics in float16 overflow in the even rows only."""
    m, n = shape
    data = torch.randn((m, n), generator=rng, dtype=torch.float32).clamp(-4, 4)
    scales = torch.ones(m)
    scales[0::2] = 24.0
    return (data * scales[:, None]).to(dtype).to(device)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=checks.dtype_id)
def test_forward_large_values(learner_function, dtype, rng, device, mode):
    shape = LARGE_ROWS[mode]
    run_forward(learner_function, large_rows(shape, dtype, rng, device), weights(shape[1], dtype, rng, device), EPS)


# --- the backward ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,dtype", _cases(BACKWARD_SHAPES))
def test_backward(learner, shapes, dtype, rng, device, mode):
    shape = shapes[mode]
    run_backward(_backward_function(learner), *backward_inputs(shape, dtype, rng, device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=checks.dtype_id)
def test_backward_strided(learner, dtype, rng, device, mode):
    m, n, x_stride, dy_stride = STRIDED[mode]
    dy, x, weight, rstd = backward_inputs((m, n), dtype, rng, device)
    run_backward(_backward_function(learner), checks.with_row_stride(dy, dy_stride),
                 checks.with_row_stride(x, x_stride), weight, rstd)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=checks.dtype_id)
def test_backward_longest_row(learner, dtype, rng, device, mode):
    run_backward(_backward_function(learner), *backward_inputs(LONGEST[mode], dtype, rng, device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=checks.dtype_id)
def test_backward_eps(learner, dtype, rng, device, mode):
    """Rows of zeros and tiny rows, their rstd made with eps = 1e-5 (up to 316)."""
    shape = SMALL_ROWS[mode]
    x = small_rows(shape, dtype, rng, device)
    rstd = rstd_of(x, SMALL_EPS)
    run_backward(_backward_function(learner), upstream_gradient(x, rstd, rng, device), x,
                 weights(shape[1], dtype, rng, device), rstd)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=checks.dtype_id)
def test_backward_uses_given_rstd(learner, dtype, rng, device, mode):
    """The rstd the backward gets was made with eps = 0.1 on rows of magnitude 0.05 to 0.5: only a
    backward that loads it (rather than recomputing it from x) can match."""
    shape = GIVEN_RSTD_SHAPE[mode]
    x = rows_of_scales(shape, dtype, rng, device, low=0.05, high=0.5)
    rstd = rstd_of(x, GIVEN_RSTD_EPS)
    run_backward(_backward_function(learner), upstream_gradient(x, rstd, rng, device), x,
                 weights(shape[1], dtype, rng, device), rstd)


@pytest.mark.parametrize("rows", GRID_ROWS)
def test_backward_grid(learner, rows, rng, device, mode):
    """The row kernel's grid is partial_count(M, this GPU's SMs, programs_per_sm) for some
    programs_per_sm from 1 to 16: enough programs to fill the GPU, each with a run of rows."""
    n_rows = GRID_ROWS[rows][mode]
    report = run_backward(_backward_function(learner), *backward_inputs((n_rows, GRID_COLS), torch.float32, rng,
                                                                         device))
    launched = report.launches[0].grid if report.launches else None
    checks.require(launched is not None and len(launched) >= 1,
                   "the grader could not work out the grid of your backward's first launch: launch with a tuple, "
                   "`rmsnorm_backward_kernel[(n_partials,)](...)`")
    programs = launched[0] * (math.prod(launched[1:]) if len(launched) > 1 else 1)
    num_sms = plan.current_device().multiprocessors if mode == "gpu" else INTERPRETER_SMS
    counts = {}
    for per_sm in PROGRAMS_PER_SM_RANGE:
        value = _learner_call(learner, "partial_count", PARTIAL_COUNT_SIGNATURE, n_rows, num_sms, per_sm)
        counts.setdefault(int(value), per_sm)
    if programs in counts:
        return
    sms = ("this GPU's" if mode == "gpu" else "the interpreter's stand-in (INTERPRETER_SMS)") + f" {num_sms} SMs"
    if programs > n_rows:
        raise GradeFailure(f"your backward launched {programs} programs for {n_rows} rows: some have no row, and "
                           "each still writes a row of partial sums (zeros at best). partial_count gives "
                           "ceil(n_rows / rows_per_program) programs, never more than the rows")
    if programs == n_rows:
        raise GradeFailure(f"your backward launched one program per row ({n_rows} programs for {n_rows} rows): "
                           f"{n_rows} rows of partial sums, each N float32 written and read back, for a reduction "
                           f"that needs only enough programs to fill the GPU. Size the grid with "
                           f"partial_count(n_rows, sm_count(x.device), PROGRAMS_PER_SM) ({sms} give "
                           f"{min(counts)} to {max(counts)} programs for 1 to 16 per SM)")
    raise GradeFailure(f"your backward launched {programs} programs for {n_rows} rows, but your partial_count gives "
                       f"{sorted(counts)} on {sms} for programs_per_sm from 1 to 16: size the grid with "
                       "partial_count(n_rows, sm_count(x.device), PROGRAMS_PER_SM)")


# --- bytes (interpreter) --------------------------------------------------------------------------

def test_traffic(learner_function, rng, device):
    """Interpreter: the forward reads x once and writes y and rstd once. (Each program reads the
    weight again; a GPU serves those re-reads from L2, so only x's passes are held to the lesson.)"""
    m, n = TRAFFIC_FORWARD
    x = rows_of_scales((m, n), torch.float32, rng, device)
    checks.expect_traffic(learner_function, {"x": x, "weight": weights(n, torch.float32, rng, device), "eps": EPS},
                          minimum_bytes=forward_bytes(m, n, 4), max_passes={"x": 1.0},
                          lesson="one program holds its row between the sum of squares and the scaling")


def test_backward_traffic(learner, rng, device, mode):
    """Interpreter: the backward reads x, dy and rstd once, and moves few partial sums: at most the
    rows partial_count gives for 16 programs per SM on the stand-in's 4 SMs."""
    m, n = TRAFFIC_BACKWARD
    dy, x, weight, rstd = backward_inputs((m, n), torch.float32, rng, device)
    record = checks.expect_traffic(_backward_function(learner), {"dy": dy, "x": x, "weight": weight, "rstd": rstd},
                                   minimum_bytes=backward_minimum_bytes(m, n, 4),
                                   max_passes={"x": 1.0, "dy": 1.0, "rstd": 1.0}, no_atomics=ATOMICS,
                                   lesson="dx and the partial sums of dweight come from the same pass over each row")
    stored = record["stored"]
    partial_rows = (stored - (m * n + n) * 4) / (n * 4)  # everything stored but dx and dweight
    limit = max(partial_count_reference(m, INTERPRETER_SMS, p) for p in PROGRAMS_PER_SM_RANGE)
    if partial_rows > limit:
        raise GradeFailure(f"your backward stored {partial_rows:.0f} rows of {n} values besides dx and dweight, for "
                           f"{m} rows of x: that is about one row of partial sums per row of x. Each is written and "
                           f"read back ({8 * n} bytes per row); a program that loops over many rows keeps one "
                           f"running sum. On the interpreter's {INTERPRETER_SMS} SMs, partial_count gives at most "
                           f"{limit} programs. {record['sentence']}")


def partial_count_reference(n_rows: int, num_sms: int, programs_per_sm: int) -> int:
    slots = num_sms * programs_per_sm
    rows_each = -(-n_rows // slots)
    return -(-n_rows // rows_each)


#: What the grader says about atomics in the backward (interpreter: the traffic counter sees them).
ATOMICS = ("your backward adds with atomics: programs finish in an order that changes from run to run and "
           "float32 addition is not associative, so dweight changes in its last bits between two runs on the "
           "same input (a GPU shows it; this interpreter runs programs one at a time). Write each program's sum "
           "as one row of a partial buffer and add the rows in a second kernel, always in the same order")


def test_dweight_deterministic(learner, rng, device, mode):
    """The same inputs give the same bits. GPU: three runs compared bit for bit. Interpreter: atomics,
    counted by the traffic counter, are refused (programs run one at a time here, so they would agree)."""
    shape = DETERMINISM_SHAPE[mode]
    dy, x, weight, rstd = backward_inputs(shape, torch.float32, rng, device)
    fn = _backward_function(learner)
    if mode != "gpu":
        checks.expect_traffic(fn, {"dy": dy, "x": x, "weight": weight, "rstd": rstd},
                              minimum_bytes=backward_minimum_bytes(*shape, 4), no_atomics=ATOMICS)
        return
    runs = []
    for _ in range(DETERMINISM_RUNS):
        # A zeroed dweight is what atomics need; the other checks say what a fill costs, this one
        # says what atomics do.
        report = run_backward(fn, dy, x, weight, rstd, allow_fill=True)
        dx, dweight = report.result
        runs.append((guards.bits_view(dx.detach()).clone(), guards.bits_view(dweight.detach()).clone()))
    for name, index in (("dweight", 1), ("dx", 0)):
        first = runs[0][index]
        for again in runs[1:]:
            differ = int((again[index] != first).sum())
            if differ:
                raise GradeFailure(
                    f"`{name}` came out different in {differ} of {first.numel()} elements between two runs on the "
                    f"same input ({shape[0]} x {shape[1]} fp32): the sum depends on the order in which programs "
                    "finish, which is what atomics (tl.atomic_add) give. Write each program's sum as one row of a "
                    "partial buffer and add the rows in a second kernel, always in the same order")


# --- performance (GPU only) -----------------------------------------------------------------------

def bench_rows(l2_bytes: int, free_bytes: int, n: int = BENCH_N, element_size: int = 2) -> int:
    """Rows of the 4096-wide bf16 benchmark: at least 16384, and x + y at least 8 L2s; capped so the
    backward's five tensors (x, dy, dx, y and eager's copies) fit in half the free memory."""
    want = max(BENCH_MIN_M, -(-8 * l2_bytes // (2 * n * element_size)))
    cap = (free_bytes // 2) // (6 * n * element_size)
    return max(1, min(want, cap))


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device``: rows of 4096 in bfloat16 (float16, the same bytes, on a card without
    it), at least 16384 and 8 L2 sizes, capped so the backward's tensors of every set fit (`bench_rows`)."""
    from grader.judge import clock

    dtype = plan.half_dtype(device)
    m = bench_rows(device.cache_bytes, free_bytes // (clock.SETS + 2))
    one_set = 4 * m * BENCH_N * 2 + m * 4  # the backward's set: dy, x and the dx slot, weight and rstd
    return plan.PerformanceInput(label=f"{m} x {BENCH_N} {dtype}", dtype=dtype, data_bytes=forward_bytes(m, BENCH_N, 2),
                                 held_bytes=plan.timed_sets_bytes(one_set, free_bytes) + 2 * m * BENCH_N * 4,
                                 sizes={"m": m, "n": BENCH_N})


def _sample_rows(m: int) -> list[int]:
    return sorted({0, 1, m // 2, m - 1})


def test_performance(exercise, learner, learner_function, mode, check):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    import torch.nn.functional as F

    from grader import bandwidth
    from grader.judge import clock

    _, timed = plan.here(__file__)
    m, n, dtype = timed.sizes["m"], timed.sizes["n"], plan.torch_dtype(timed.dtype)
    label = timed.label
    rows = _sample_rows(m)

    def forward_set(generator):
        x = torch.randn(m, n, device="cuda", dtype=dtype, generator=generator)
        weight = (1 + 0.1 * torch.randn(n, device="cuda", generator=generator)).to(dtype)
        return [x, weight, EPS], {}

    def backward_set(generator):
        x, weight, _ = forward_set(generator)[0]
        dy = torch.randn(m, n, device="cuda", dtype=dtype, generator=generator)
        rstd = torch.rsqrt(x.float().pow(2).mean(dim=1) + EPS)
        return [dy, x, weight, rstd], {}

    def verify_forward(y, args, kwargs):  # y in full against the forward in float32 on the GPU
        x, weight, eps = args
        want = (x.float() * torch.rsqrt(x.float().pow(2).mean(dim=1, keepdim=True) + eps) * weight.float())
        if not bool(torch.allclose(y.float(), want, rtol=2e-2, atol=2e-2)):
            want_y, _ = reference_forward(x[rows], weight, eps)
            try:
                _check_y(y[rows], want_y, dtype)
            except GradeFailure as failure:
                raise GradeFailure(f"the forward is wrong at the benchmark size ({label}): {failure}") from None
            raise GradeFailure(f"the forward is wrong at the benchmark size ({label})")

    def verify_backward(dx, args, kwargs):
        dy, x, weight, rstd = args
        want_dx, _ = reference_backward(dy[rows], x[rows], weight, rstd[rows])
        scale = _dx_scale(dy[rows], x[rows], weight, rstd[rows])
        try:
            _check_dx(dx[rows], want_dx, dtype, scale)
        except GradeFailure as failure:
            raise GradeFailure(f"the backward is wrong at the benchmark size ({label}): {failure}") from None

    eager_forward_ms = clock.time_local(lambda x, w, eps: F.rms_norm(x, (n,), w, eps), forward_set).ms
    forward_failure = backward_failure = None
    try:
        checks.measure_bandwidth(learner_function, forward_set, nbytes=forward_bytes(m, n, 2), floor=exercise.floor,
                                 verify=verify_forward, label=f"{label}, forward")
    except GradeFailure as failure:
        if check.performance is None:
            raise
        forward_failure = failure
    forward = check.performance
    check.performance = None
    backward = _backward_function(learner)
    try:
        checks.measure_bandwidth(backward, backward_set, nbytes=backward_minimum_bytes(m, n, 2), floor=BACKWARD_FLOOR,
                                 verify=verify_backward, label=f"{label}, backward")
    except GradeFailure as failure:
        if check.performance is None:
            check.performance = forward
            raise
        backward_failure = failure
    back = check.performance
    eager_fwd_gbps = bandwidth.gbps(forward_bytes(m, n, 2), eager_forward_ms)
    forward.passed = forward.passed and back.passed
    forward.verdict = f"forward {forward.verdict}; backward {back.verdict}"
    forward.details.update(backward={k: getattr(back, k) for k in ("achieved_gbps", "fraction", "floor", "passed",
                                                                   "verdict", "ms", "ms_runs", "bytes", "input")},
                           eager_forward_ms=round(eager_forward_ms, 5))
    forward.lines[:0] = [
        f"backward: {back.achieved_gbps:.0f} GB/s on its minimum bytes ({back.ms * 1000:.1f} µs, "
        f"{back.fraction:.0%} of the ceiling, floor {BACKWARD_FLOOR:.0%}; two launches)",
        f"torch.nn.functional.rms_norm forward: {eager_forward_ms * 1000:.1f} µs "
        f"({eager_fwd_gbps / forward.ceiling_gbps:.0%} of the ceiling on the same minimum bytes)",
    ]
    check.performance = forward
    failures = [str(f) for f in (forward_failure, backward_failure) if f is not None]
    if failures:
        raise GradeFailure("; ".join(failures))
