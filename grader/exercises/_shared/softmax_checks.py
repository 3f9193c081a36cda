"""What the softmax exercises (3, 4, and any later row-softmax) share: inputs, the reference,
the diagnosis of known pitfalls, and the performance check.

What other specs use:

* `reference(x)` — float64 softmax of each row, NaN for a row that is entirely -inf (as
  ``torch.softmax``: there is no distribution over no admissible value).
* `MAX_ROW_BYTES`, `max_cols(dtype)` — the longest row exercises 3 and 4 hold in one block:
  128 KiB, i.e. 32768 float32 or 65536 float16/bfloat16 columns.
* `normal_rows`, `extreme_rows`, `masked_rows` — input generators drawn on the CPU from the
  test's generator (``--seed`` replays them on any device).
* `check(fn, x, dtype=...)` — `grader.judge.checks.run_case` with one launch allowed, guards, poison
  and fill detection, and `expect_softmax`'s comparison: the tolerances of `grader.judge.compare`
  with the ``atol`` term relative to each row's largest value (`expect_close_by_row`), exact
  zeros where a logit is -inf, and, when it fails, the answer recomputed the way each known
  pitfall computes it, naming the pitfall whose answer the learner's output matches
  (`diagnose`) before the grader's generic mismatch sentence.
* `expect_fully_masked(x, row)` — the same for an input whose row ``row`` is entirely -inf,
  with its own sentence when that row is not NaN.
* `check_longest(fn, x, exercise=...)` — `check` on the longest row of ``x``'s dtype; a
  ``ValueError`` from the learner's launcher (a row limit left at an older, smaller value) becomes
  a sentence that states the contract's limit.
* `check_strided(fn, x, row_stride, ...)` — the same on a view whose rows are ``row_stride``
  elements apart; when it fails and the same values in contiguous rows pass, the message says
  the kernel ignores the row stride.
* `last_programs(fn)` — programs in the last launch of the learner's last call (the launch
  records come from the learner's process with every call).

The pitfalls `diagnose` recognises, each by recomputing its answer:

* masked lanes loaded as 0, not -inf: softmax of the row padded with zeros to the block;
* masked lanes not zeroed before the sum: each padding lane adds exp(0) = 1 to the sum;
* no max subtraction: exp overflows in the rows with large logits (NaN or zeros there only);
* the grid one row short: only the last row unwritten;
* a persistent kernel without its row loop: only the first ``grid`` rows written.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from grader.judge import checks
from grader.wire import guards
from grader.judge.compare import DEFAULT_TOLERANCES, Tolerance, dtype_name, expect_close
from grader.wire.failures import ACCESS_KINDS, GradeFailure, plural
from grader.wire.results import Kind

NEG_INF = float("-inf")
#: The diagnosis of `other=0.0`; the fully masked row recognizes it in the other rows' failure.
LOADED_AS_ZERO = "masked lanes were loaded as 0, not -inf"
#: exp(x) is infinite in float32 for x above log(2^128) = 88.72.
FLOAT32_EXP_OVERFLOW = 88.72
#: The most bytes of one row exercises 3 and 4 hold in one block: 128 KiB. The block lives in
#: registers: an SM has 65,536 32-bit registers (256 KiB) and a program of 32 warps may use at most
#: 64 per thread, so a 128 KiB row is 32 float32 values per thread, half of what the program may
#: hold. `python -m tools.benchmarks.ex03_softmax --registers` compiles the solution for sm_90 (no
#: GPU needed) and prints its registers and spills for each row length, dtype and warp count.
MAX_ROW_BYTES = 128 * 1024


def max_cols(dtype: torch.dtype) -> int:
    """The longest row, in columns, that fits in one block for ``dtype``: 32768 float32 values,
    65536 float16 or bfloat16 values (`MAX_ROW_BYTES`)."""
    return MAX_ROW_BYTES // dtype.itemsize


#: The widest block `diagnose` tries when it recomputes a masked-lane mistake (each try is a float64
#: softmax of every row padded to that width): the float32 limit. Wider blocks only come with longer
#: rows, and `_blocks_for` always tries the next power of two of the row itself.
LARGEST_BLOCK = max_cols(torch.float32)


# --- inputs --------------------------------------------------------------------------------

def normal_rows(shape, dtype: torch.dtype, rng: torch.Generator, device: str) -> torch.Tensor:
    """Standard normal logits (never all equal, never zero)."""
    return checks.randn(shape, dtype, rng, device)


def extreme_rows(shape, dtype: torch.dtype, rng: torch.Generator, device: str, *, scale: float = 1e4) -> torch.Tensor:
    """Even rows have logits of magnitude ``scale`` (up to 5 x 1e4, within fp16's 65504), odd rows
    are standard normal: a kernel without the max subtraction overflows in the even rows only,
    which is how its mistake is told apart from others."""
    m, n = shape
    data = torch.randn((m, n), generator=rng, dtype=torch.float32).clamp(-5.0, 5.0)
    scales = torch.ones(m, 1)
    scales[0::2] = scale
    return (data * scales).to(dtype).to(device)


def masked_rows(shape, dtype: torch.dtype, rng: torch.Generator, device: str, *, fully_masked_row: int | None = None) -> torch.Tensor:
    """Normal logits with about a third of them -inf (masked, as attention masks do), at least one
    finite value per row; with ``fully_masked_row``, that row is entirely -inf."""
    m, n = shape
    data = torch.randn((m, n), generator=rng, dtype=torch.float32)
    hidden = torch.rand((m, n), generator=rng) < 0.35
    keep = torch.randint(0, n, (m,), generator=rng)
    hidden[torch.arange(m), keep] = False
    data[hidden] = NEG_INF
    if fully_masked_row is not None:
        data[fully_masked_row] = NEG_INF
    return data.to(dtype).to(device)


def show_rows(size: str | None, default: tuple[int, int, int]) -> "ShowCase":
    """The input of `grade show` for a row softmax: M rows of N float32, ROW_STRIDE elements apart
    (``--size M,N,ROW_STRIDE``; the default stride leaves a gap between rows)."""
    from grader.learner.access_map import ShowCase, parse_size

    m, n, stride = parse_size(size, default, ("M (rows)", "N (columns)", "the row stride"),
                              ",".join(str(v) for v in default))
    if stride < n:
        raise ValueError(f"--size: the row stride ({stride}) must be at least N ({n})")
    rng = torch.Generator().manual_seed(0)
    x = checks.with_row_stride(normal_rows((m, n), torch.float32, rng, "cpu"), stride)
    apart = f", rows {stride} elements apart" if stride != n else ""
    return ShowCase({"x": x}, label=f"{m} rows of {n} float32{apart}")


# --- the answer and the wrong answers ------------------------------------------------------

def reference(x: torch.Tensor) -> torch.Tensor:
    """Float64 softmax of each row on the CPU; NaN for a row that is entirely -inf (as torch)."""
    return torch.softmax(x.detach().double().cpu(), dim=1)


def _padded_zeros(x: torch.Tensor, pad: int) -> torch.Tensor:
    """Masked lanes loaded as 0: softmax of each row followed by ``pad`` zeros, first N columns."""
    zeros = torch.zeros((x.shape[0], pad), dtype=x.dtype)
    return torch.softmax(torch.cat([x, zeros], dim=1), dim=1)[:, : x.shape[1]]


def _padded_ones_in_sum(x: torch.Tensor, pad: int) -> torch.Tensor:
    """Masked lanes not zeroed before the sum, their exponent zeroed instead: each adds exp(0) = 1."""
    m = x.amax(dim=1, keepdim=True)
    e = torch.exp(x - m)
    return e / (e.sum(dim=1, keepdim=True) + pad)


def _blocks_for(n_cols: int) -> list[int]:
    """Block widths a learner plausibly used for rows of n_cols: next power of two and up."""
    block = 1 << max(0, (n_cols - 1).bit_length())
    blocks = []
    while block <= max(LARGEST_BLOCK, n_cols):
        if block > n_cols:
            blocks.append(block)
        block *= 2
    return blocks


def _row_scale(model: torch.Tensor) -> torch.Tensor:
    """max |model| over the finite values of each row (1 where a row has none), shaped to broadcast."""
    finite = torch.isfinite(model)
    scale = torch.where(finite, model.abs(), torch.zeros_like(model)).amax(dim=-1, keepdim=True)
    return torch.where(scale > 0, scale, torch.ones_like(scale))


def _bound(model: torch.Tensor, tol: Tolerance) -> torch.Tensor:
    """The tolerance of each element: rtol relative to itself, atol relative to its row's largest value.

    Per row, not per tensor: in the stability check a row of ordinary logits (values near 1/N)
    sits beside nearly one-hot rows (values near 1), and a tensor-wide scale would excuse any
    error in the ordinary row.
    """
    return tol.rtol * model.abs() + tol.atol * _row_scale(model)


def _matches(got: torch.Tensor, model: torch.Tensor, tol: Tolerance) -> bool:
    """Does ``got`` equal ``model`` within ``tol`` (NaN matching NaN, infinities exactly)?"""
    finite = torch.isfinite(model)
    same_special = (torch.isnan(got) & torch.isnan(model)) | ((got == model) & ~finite)
    close = (got - model).abs() <= _bound(model, tol)
    return bool((same_special | (close & finite)).all())


def expect_close_by_row(out: torch.Tensor, want: torch.Tensor, *, tolerance: Tolerance | None = None) -> None:
    """`grader.judge.compare.expect_close`'s comparison with each row's own scale (see `_bound`).

    Run after ``expect_close``, which has already checked shape, dtype, unwritten elements and
    NaN/inf; this catches what its tensor-wide scale lets through.
    """
    tol = tolerance or DEFAULT_TOLERANCES.get(out.dtype, DEFAULT_TOLERANCES[torch.float32])
    got = out.detach().double().cpu()
    finite = torch.isfinite(want)
    err = (got - want).abs()
    bound = _bound(want, tol)
    bad = finite & (err > bound)
    if not bool(bad.any()):
        return
    where = bad.nonzero().tolist()
    shown = "; ".join(f"out[{r}, {c}] = {got[r, c].item():.6g} but expected {want[r, c].item():.6g}" for r, c in where[:3])
    more = f"; and {len(where) - 3} more" if len(where) > 3 else ""
    worst = (err[finite] / bound[finite]).max().item()
    raise GradeFailure(
        f"{len(where)} of {want.numel()} elements of `out` differ from the float64 reference beyond the "
        f"{dtype_name(out.dtype)} tolerance (rtol {tol.rtol:g}, atol {tol.atol:g} x the largest value of the row; "
        f"worst {worst:.3g}x over): {shown}{more}"
    )


def _relaxed(dtype: torch.dtype) -> Tolerance:
    tol = DEFAULT_TOLERANCES.get(dtype, DEFAULT_TOLERANCES[torch.float32])
    return Tolerance(rtol=4 * tol.rtol, atol=4 * tol.atol)


def _unwritten_rows(out: torch.Tensor) -> tuple[list[int], bool]:
    """Rows of ``out`` never written (all poison), and whether any row is only partly written."""
    poison = guards.is_poison(out.detach()).cpu()
    if out.ndim != 2 or not bool(poison.any()):
        return [], False
    whole = poison.all(dim=1)
    partly = bool((poison.any(dim=1) & ~whole).any())
    return whole.nonzero().flatten().tolist(), partly


def diagnose(out: torch.Tensor, x: torch.Tensor, *, grid: int | None = None) -> str | None:
    """A sentence naming the known pitfall whose answer ``out`` is, or None.

    ``x`` is the input the learner's function received; ``grid`` the number of programs it
    launched (when known: it tells a persistent kernel without its loop from other unwritten rows).
    """
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or tuple(out.shape) != tuple(x.shape):
        return None
    n_rows, n_cols = x.shape
    rows, partly = _unwritten_rows(out)
    if rows and not partly:
        first = rows[0]
        if first > 0 and rows == list(range(first, n_rows)):
            if grid is not None and first == grid:
                return (f"only the first {grid} rows of `out` were written, one per program, and your grid has "
                        f"{grid} programs for {n_rows} rows: the kernel ignores the stride loop. Each program "
                        "must visit rows pid, pid + num_programs, pid + 2 * num_programs, ... "
                        "(`for row in tl.range(pid, n_rows, tl.num_programs(0))`)")
            if first == n_rows - 1:
                return (f"the last row of `out` (row {n_rows - 1}) was never written and every other row was: "
                        f"the grid is one row short. One program per row needs grid = (n_rows,) = ({n_rows},)")
            return (f"rows {first} to {n_rows - 1} of `out` were never written and rows 0 to {first - 1} were: "
                    f"{first} programs ran for {n_rows} rows. Is the grid too small?")
        return None
    if rows or partly:
        return None

    got = out.detach().double().cpu()
    xs = x.detach().double().cpu()
    want = reference(x)
    tol = _relaxed(out.dtype)

    # No max subtraction: exp overflows (NaN, or zeros after a division by inf) in rows with
    # large logits, while rows of ordinary logits come out right.
    finite_rows = torch.isfinite(xs).any(dim=1)
    row_max = torch.where(torch.isfinite(xs), xs, torch.full_like(xs, NEG_INF)).amax(dim=1)
    large = finite_rows & (row_max > FLOAT32_EXP_OVERFLOW)
    bad_rows = torch.tensor([bool(large.any()) and not _matches(got[r], want[r], tol) for r in range(n_rows)])
    if bool(bad_rows.any()) and not bool((bad_rows & ~large).any()):
        broken = [r for r in range(n_rows) if bad_rows[r]]
        if all(bool((~torch.isfinite(got[r])).any()) or bool((got[r] == 0).all()) for r in broken):
            return (f"exp overflowed: subtract the row max first. Rows {_few(broken)} hold logits up to "
                    f"{row_max[broken[0]].item():.4g} and come out as NaN or zeros, while rows of ordinary logits "
                    f"are right: in float32, exp(x) is infinite above x = {FLOAT32_EXP_OVERFLOW}. "
                    "softmax(x) = exp(x - max) / sum(exp(x - max)) is the same function and never overflows")

    # Masked lanes polluting the sum, for each block width a learner may have used.
    for block in _blocks_for(n_cols):
        pad = block - n_cols
        if _matches(got, _padded_ones_in_sum(xs, pad), tol):
            lanes = "the one masked lane" if pad == 1 else f"each of the {pad} masked lanes"
            return (f"masked lanes were not zeroed before the sum: your outputs are exp(x - max) / (sum + {pad}), "
                    f"so {lanes} of your {block}-wide block added exp(0) = 1 to the row sum. "
                    "Zero the exponentials of masked lanes, not their exponents: "
                    "`e = tl.where(mask, tl.exp(x - m), 0.0)` (or load them as -inf: exp(-inf) = 0)")
        if _matches(got, _padded_zeros(xs, pad), tol):
            return (f"{LOADED_AS_ZERO}: your outputs are the softmax of each row padded "
                    f"with {plural(pad, 'zero')} (the masked lanes of your {block}-wide block), so "
                    f"{'it' if pad == 1 else 'each of them'} added "
                    "exp(0 - max) to the row sum. Load with `other=-float('inf')`: it cannot win the max, and "
                    "exp(-inf) = 0 adds nothing")
    return None


def _few(rows: list[int]) -> str:
    shown = ", ".join(str(r) for r in rows[:4])
    return shown + (f" and {len(rows) - 4} more" if len(rows) > 4 else "")


def expect_softmax(x: torch.Tensor, dtype: torch.dtype, *, grid: Callable[[], int | None] | None = None,
                   tolerance: Tolerance | None = None) -> Callable[[Any], None]:
    """A `run_case` ``expected=`` callable: compare with the reference, diagnose on failure, and
    require exact zeros where the logits are -inf (outside fully masked rows).

    ``grid`` is called on failure to learn how many programs were launched (see `last_programs`).
    """
    want = reference(x)

    def check_result(out: Any) -> None:
        try:
            expect_close(out, want, name="out", dtype=dtype, tolerance=tolerance, poisoned=True)
            expect_close_by_row(out, want, tolerance=tolerance)
        except GradeFailure as failure:
            hint = diagnose(out, x, grid=grid() if grid else None)
            if hint:
                raise GradeFailure(f"{hint}. The comparison: {failure}", kind=failure.kind) from None
            raise
        masked = torch.isneginf(x.detach().cpu()) & ~torch.isnan(want)
        if bool(masked.any()):
            got = out.detach().cpu()
            leaked = masked & (got != 0)
            if bool(leaked.any()):
                where = leaked.nonzero().tolist()
                shown = "; ".join(f"out[{r}, {c}] = {got[r, c].item():.6g}" for r, c in where[:3])
                more = f"; and {len(where) - 3} more" if len(where) > 3 else ""
                raise GradeFailure(
                    f"masked logits must give exactly 0: x is -inf at {len(where)} places where your output is not 0 "
                    f"({shown}{more}). exp(-inf - max) is exactly 0 in float32; a large negative number in place of "
                    "-inf, or a clamp before the exp, leaves a small non-zero there"
                )

    return check_result


def expect_fully_masked(x: torch.Tensor, row: int, *, grid: Callable[[], int | None] | None = None) -> Callable[[Any], None]:
    """A `run_case` ``expected=`` callable for an input whose row ``row`` is entirely -inf: that row
    must be NaN (the contract, as torch.softmax), the others as `expect_softmax` says."""
    rest = expect_softmax(x, x.dtype, grid=grid)

    def check_result(out: Any) -> None:
        if isinstance(out, torch.Tensor) and out.shape == x.shape:
            values = out[row].detach().float().cpu()
            if not bool(torch.isnan(values).all()) and not bool(guards.is_poison(out[row].detach()).any()):
                shown = ", ".join(f"{v:.6g}" for v in values[:3].tolist())
                try:
                    rest(out)
                except GradeFailure as other_rows:
                    # `other=0.0` gives zeros here without any special case: the padding lanes' 0 wins
                    # the max, and every exp(-inf - 0) is 0. The other rows carry the same cause.
                    if LOADED_AS_ZERO in str(other_rows):
                        raise GradeFailure(
                            f"row {row} of x is entirely -inf (every logit masked) and your output starts {shown} "
                            "instead of NaN (torch.softmax's 0 / 0). This is not a special case: it has the same "
                            f"cause as the other rows: {LOADED_AS_ZERO}. Load with "
                            "`other=-float('inf')`, and this row comes out NaN by itself.") from None
                raise GradeFailure(
                    f"row {row} of x is entirely -inf (every logit masked): its softmax is 0 / 0, and this exercise "
                    f"follows torch.softmax, which returns NaN for such a row, but your output starts {shown}. "
                    "A kernel that subtracts the row max gives NaN there by itself (max = -inf, x - max = NaN): "
                    "do not special-case the row"
                )
        rest(out)

    return check_result


def check(fn: Callable, x: torch.Tensor, *, dtype: torch.dtype | None = None, max_launches: int = 1,
          grid: Callable[[], int | None] | None = None, tolerance: Tolerance | None = None) -> checks.CaseReport:
    """Grade one call ``fn(x)``: guards, poison, fills, one launch, reference, diagnosis.

    ``grid`` tells the diagnosis how many programs a persistent kernel ran (`last_programs`); without
    it (one program per row) a grid too small is never read as a missing row loop."""
    return checks.run_case(fn, {"x": x}, expect_softmax(x, dtype or x.dtype, grid=grid, tolerance=tolerance),
                           max_launches=max_launches)


def check_longest(fn: Callable, x: torch.Tensor, *, exercise: int, grid: Callable[[], int | None] | None = None,
                  max_launches: int = 1) -> checks.CaseReport:
    """`check` on an input whose rows are as long as one block holds for its dtype (`max_cols`).

    A learner whose launcher still refuses such rows (a limit copied from an older version of the
    exercise, or one limit in columns for every dtype) gets the contract's limit in a sentence.
    """
    try:
        return checks.run_case(fn, {"x": x}, expect_softmax(x, x.dtype, grid=grid), max_launches=max_launches)
    except GradeFailure as failure:
        if failure.raised != "ValueError":
            raise
        m, n = x.shape
        raise GradeFailure(
            f"exercise {exercise} holds rows of up to {MAX_ROW_BYTES // 1024} KiB in one block: "
            f"{max_cols(torch.float32)} float32 columns, {max_cols(torch.float16)} float16 or bfloat16 columns "
            f"(the limit is in bytes: `n_cols * x.element_size() <= {MAX_ROW_BYTES}`), but your softmax refused a "
            f"{m} x {n} {dtype_name(x.dtype)} input. The grader saw: {failure}"
        ) from None


def check_strided(fn: Callable, x: torch.Tensor, row_stride: int, *, dtype: torch.dtype | None = None,
                  grid: Callable[[], int | None] | None = None) -> checks.CaseReport:
    """Grade ``fn`` on the values of ``x`` laid out with ``row_stride`` elements between row starts.

    When that fails and the same values in contiguous rows pass, the kernel addresses rows as if
    they were contiguous: the message says so, naming which tensor's stride it ignores.
    """
    strided = checks.with_row_stride(x, row_stride)
    try:
        return check(fn, strided, dtype=dtype, grid=grid)
    except GradeFailure as failure:
        if failure.kind not in (Kind.WRONG, *ACCESS_KINDS):
            raise
        try:
            check(fn, x.contiguous(), dtype=dtype, grid=grid)
        except GradeFailure:
            raise failure from None
        m, n = x.shape
        text = str(failure)
        if "past the end of `out`" in text or "before the start of `out`" in text or "gaps between the rows of `out`" in text:
            raise GradeFailure(
                f"your kernel ignores the row stride of `out`: it is right on contiguous rows, but when x is a "
                f"{m} x {n} view whose rows are {row_stride} elements apart, it writes out's rows {row_stride} "
                f"apart too. `out` is a new contiguous tensor (its rows are out.stride(0) = {n} apart): pass "
                f"out.stride(0) to the kernel separately from x.stride(0). The grader saw: {failure}",
                kind=failure.kind,
            ) from None
        raise GradeFailure(
            f"your kernel ignores the row stride: it is right when the rows of x are contiguous, but wrong on a "
            f"{m} x {n} view whose rows are {row_stride} elements apart (a column slice of a wider tensor, "
            f"x.stride(0) = {row_stride}). Row r starts at x_ptr + r * x.stride(0), not r * n_cols: pass "
            f"x.stride(0) (and out.stride(0) for the output) to the kernel. The grader saw: {failure}",
            kind=failure.kind,
        ) from None


# --- launches ------------------------------------------------------------------------------

def last_programs(fn: Callable) -> int | None:
    """Programs in the last launch of the learner's last call (the product of its grid), or None."""
    last = getattr(fn, "last", None)
    if last is None or not last.launches:
        return None
    return last.launches[-1].programs


def softmax_input(device, free_bytes: int, *, n_cols: int, minimum_bytes):
    """Exercises 3 and 4's timed input on ``device``: ``n_cols``-wide fp32 rows, each input set 8 L2 sizes
    or more, every set in a share of the free memory (`grader.plan`)."""
    from grader import plan
    from grader.judge import clock

    n_rows = max(1, plan.elements_for_cache(2 * 4, device.cache_bytes, free_bytes, l2_multiple=8,
                                            budget_fraction=0.5 / (clock.SETS + 2)) // n_cols)
    one_set = 2 * n_rows * n_cols * 4
    return plan.PerformanceInput(label=f"{n_rows:,} x {n_cols} fp32", dtype="fp32",
                                 data_bytes=minimum_bytes(n_rows, n_cols, 4),
                                 held_bytes=plan.timed_sets_bytes(one_set, free_bytes) + one_set,
                                 sizes={"n_rows": n_rows, "n_cols": n_cols})


def measure_softmax_bandwidth(fn, timed, *, floor: float, minimum_bytes) -> None:
    """GPU: exercises 3 and 4's performance check on ``timed`` (`softmax_input`): every output compared
    with torch.softmax, timed by the judge's clock."""
    n_rows, n_cols = timed.sizes["n_rows"], timed.sizes["n_cols"]

    def make_set(generator):
        return [torch.randn(n_rows, n_cols, device="cuda", generator=generator)], {}

    def verify(out, args, kwargs):
        (x,) = args
        want = torch.softmax(x, dim=1)  # float32 on the GPU: a float64 copy of every set would not fit
        checks.require(bool(torch.allclose(out, want, rtol=1e-4, atol=1e-6)),
                       f"`out` is wrong at the benchmark size {n_rows} x {n_cols}")

    checks.measure_bandwidth(fn, make_set, nbytes=minimum_bytes(n_rows, n_cols, 4), floor=floor, verify=verify,
                             label=timed.label)


__all__ = ["measure_softmax_bandwidth", "softmax_input", "MAX_ROW_BYTES", "max_cols", "show_rows", "check", "check_longest",
           "check_strided", "last_programs",
           "diagnose", "expect_close_by_row", "expect_fully_masked", "expect_softmax", "extreme_rows",
           "masked_rows", "normal_rows", "reference"]
