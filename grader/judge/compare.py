"""Comparing the learner's output with a float64 reference, with mismatches named.

Tolerances are per dtype and scaled to the reference: an element passes when

    |out - ref| <= rtol * |ref| + atol * max|ref|

so an all-zero answer cannot pass (the ``atol`` term is a small fraction of the answer's own
scale, not an absolute number). The defaults allow a few units in the last place of each dtype
after fp32 arithmetic inside the kernel (fp16 has 11 significant bits, bf16 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from grader.wire import guards
from grader.wire.failures import GradeFailure
from grader.wire.results import Kind


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float  # times max|reference|


#: fp32: exact-ish (a few ulp of float32 plus reduction-order differences).
#: fp16 / bf16: the output is rounded to 11 / 8 significant bits: 2^-10 and 2^-7 relative, x2.
DEFAULT_TOLERANCES = {
    torch.float32: Tolerance(rtol=1e-5, atol=1e-6),
    torch.float64: Tolerance(rtol=1e-10, atol=1e-12),
    torch.float16: Tolerance(rtol=2e-3, atol=1e-3),
    torch.bfloat16: Tolerance(rtol=1.6e-2, atol=8e-3),
}

DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
               torch.float64: "float64", torch.int32: "int32", torch.int64: "int64"}

SHOWN = 3  # mismatches listed by index before "and K more"


def dtype_name(dtype: torch.dtype) -> str:
    return DTYPE_NAMES.get(dtype, str(dtype).replace("torch.", ""))


def _index(flat: int, shape: tuple[int, ...]) -> str:
    idx = []
    for size in reversed(shape):
        idx.append(flat % size if size else 0)
        flat //= size if size else 1
    return "[" + ", ".join(str(i) for i in reversed(idx)) + "]"


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _listing(name: str, positions: torch.Tensor, actual: torch.Tensor, expected: torch.Tensor,
             shape: tuple[int, ...], *, show_actual: bool = True) -> str:
    parts = []
    for p in positions[:SHOWN].tolist():
        where = f"{name}{_index(p, shape)}"
        if show_actual:
            parts.append(f"{where} = {_fmt(actual[p].item())} but expected {_fmt(expected[p].item())}")
        else:
            parts.append(f"{where} (expected {_fmt(expected[p].item())})")
    more = positions.numel() - SHOWN
    text = "; ".join(parts)
    return text + (f"; and {more} more" if more > 0 else "")


def expect_close(actual, expected: torch.Tensor, *, name: str = "out",
                 dtype: torch.dtype | None = None, tolerance: Tolerance | None = None,
                 poisoned: bool = True) -> None:
    """Raise GradeFailure with a named sentence unless ``actual`` matches ``expected``.

    ``expected`` is the float64 reference. ``dtype`` is the dtype the output must have (the
    inputs' dtype by default: pass it explicitly). ``poisoned`` says whether unwritten elements
    of ``actual`` still hold the grader's poison (true for outputs the learner allocated).
    """
    if not isinstance(actual, torch.Tensor):
        raise GradeFailure(f"your function returned {type(actual).__name__}, not a tensor: return `{name}`")
    if tuple(actual.shape) != tuple(expected.shape):
        raise GradeFailure(
            f"`{name}` has shape {tuple(actual.shape)} but the answer has shape {tuple(expected.shape)}"
        )
    if dtype is not None and actual.dtype != dtype:
        raise GradeFailure(
            f"`{name}` is {dtype_name(actual.dtype)} but should be {dtype_name(dtype)} "
            f"(allocate it with torch.empty_like on the input)"
        )
    shape = tuple(actual.shape)
    total = actual.numel()
    if total == 0:
        return
    flat_actual = actual.detach().reshape(-1)
    unwritten = guards.is_poison(flat_actual).cpu() if poisoned else torch.zeros(total, dtype=torch.bool)
    got = flat_actual.double().cpu()
    want = expected.detach().reshape(-1).double().cpu()

    if bool(unwritten.any()):
        positions = unwritten.nonzero().flatten()
        k = positions.numel()
        raise GradeFailure(
            f"left {k} of {total} elements of `{name}` unwritten: "
            + _listing(name, positions, got, want, shape, show_actual=False)
            + (" (is the grid too small, or a mask too strict?)" if k < total else " (did your kernel store anything?)"),
            kind=Kind.COVERAGE,
        )

    want_finite = torch.isfinite(want)
    got_nan = torch.isnan(got)
    bad_nan = got_nan & ~torch.isnan(want)
    if bool(bad_nan.any()):
        positions = bad_nan.nonzero().flatten()
        raise GradeFailure(
            f"{positions.numel()} of {total} elements of `{name}` are NaN where the answer is not: "
            + _listing(name, positions, got, want, shape)
        )
    # Non-finite expected values (inf, NaN) must be matched exactly.
    special = ~want_finite
    bad_special = special & ~((got == want) | (torch.isnan(got) & torch.isnan(want)))
    bad_inf = (~torch.isfinite(got)) & want_finite
    if bool(bad_special.any()) or bool(bad_inf.any()):
        positions = (bad_special | bad_inf).nonzero().flatten()
        raise GradeFailure(
            f"{positions.numel()} of {total} elements of `{name}` are infinite or lost an infinity: "
            + _listing(name, positions, got, want, shape)
        )

    tol = tolerance or DEFAULT_TOLERANCES.get(actual.dtype, DEFAULT_TOLERANCES[torch.float32])
    scale = want[want_finite].abs().max().item() if bool(want_finite.any()) else 1.0
    scale = scale or 1.0
    bound = tol.rtol * want.abs() + tol.atol * scale
    err = (got - want).abs()
    bad = want_finite & (err > bound)
    if bool(bad.any()):
        positions = bad.nonzero().flatten()
        worst = (err[want_finite] / bound[want_finite]).max().item()
        narrower = _narrower_precision(actual.dtype, got, want, err, bad)
        if narrower is not None:
            raise GradeFailure(
                f"your result has {dtype_name(narrower)}'s precision on {dtype_name(actual.dtype)} inputs: "
                f"{positions.numel()} of {total} elements of `{name}` are off by about "
                f"{_relative_error(err, want, bad):.1g} of their value, the rounding of "
                f"{dtype_name(narrower)}'s {_SIGNIFICANT_BITS[narrower]} significant bits (does the kernel cast to "
                f"`tl.{dtype_name(narrower)}`, or compute in it? Compute in float32 and round once, on the "
                "store, to the output's dtype): " + _listing(name, positions, got, want, shape))
        raise GradeFailure(
            f"{positions.numel()} of {total} elements of `{name}` differ from the float64 reference "
            f"beyond the {dtype_name(actual.dtype)} tolerance (rtol {tol.rtol:g}, atol {tol.atol:g} x "
            f"max|answer| = {tol.atol * scale:.3g}; worst {worst:.3g}x over): "
            + _listing(name, positions, got, want, shape)
        )


#: Bits of each float type's significand, the hidden bit included: rounding to it costs up to 2^-bits relative.
_SIGNIFICANT_BITS = {torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}


def _relative_error(err: torch.Tensor, want: torch.Tensor, where: torch.Tensor) -> float:
    """The median relative error over ``where`` (elements whose answer is 0 left out)."""
    nonzero = where & (want != 0)
    if not bool(nonzero.any()):
        return 0.0
    return float((err[nonzero] / want[nonzero].abs()).median())


def _narrower_precision(dtype: torch.dtype, got: torch.Tensor, want: torch.Tensor, err: torch.Tensor,
                        bad: torch.Tensor) -> torch.dtype | None:
    """The narrower float type the result was computed in, when the result says so: every finite element
    is a value of that type (the mark of a cast to it and back: a random float32 is one with odds of
    2^-16), where the answer is not, and the typical error of the elements that fail is no larger than a
    few of that type's roundings. None otherwise."""
    if dtype not in _SIGNIFICANT_BITS:
        return None
    finite = torch.isfinite(got) & torch.isfinite(want)
    if not bool(finite.any()):
        return None
    for narrow in (torch.bfloat16, torch.float16):
        bits = _SIGNIFICANT_BITS[narrow]
        if bits >= _SIGNIFICANT_BITS[dtype]:
            continue
        representable = bool((got[finite].to(narrow).double() == got[finite]).all())
        answer_representable = bool((want[finite].to(narrow).double() == want[finite]).all())
        if representable and not answer_representable and _relative_error(err, want, bad) <= 2.0 ** -(bits - 2):
            return narrow
    return None
