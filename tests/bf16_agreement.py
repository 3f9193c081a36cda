"""Small bf16 kernels, their inputs, and what their outputs must equal: the GPU's, and a model's.

Each `Case` has inputs drawn from `SEED` (with hand-made hard values: rounding ties, overflow,
signed zeros, subnormals, NaN), a launcher that runs its Triton kernel on any device, and a
*model*: the same computation written with torch's float32 -> bfloat16 rounding and exact
fractions, independent of `grader.learner.interpreter_fixes`. Each output says how it must agree:

* ``exact``: the same bits (any NaN matches any NaN). Every operation the GPU rounds once (add,
  mul, fma, casts, max/min, where, constants) and every order-free reduction (max, argmax).
* ``near_tie``: the same bits, except where the exact result lies so close to a bf16 rounding
  tie that a float32 approximation may round either way; there one bf16 ulp is allowed. For
  ``tl.exp`` (the GPU's ``ex2.approx``) and ``/`` on float32 (the GPU's ``div.full``, 2 ulp).
* ``bound``: ``|a - b| <= bound`` elementwise, for sums whose order of accumulation the GPU
  chooses (the bound is the textbook one for any order; see each case).

Used by tests/test_interpreter_fixes.py (interpreter vs model; interpreter vs the H200's outputs in
tests/data/bf16-h200.json) and by tests/gpu_record.py, which writes that file on a GPU.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
import torch
import triton
import triton.language as tl

SEED = 20261201
N = 1024  # elements of each element-wise case
BLOCK = 256

# --- bf16 bits -----------------------------------------------------------------------------

ONE, ONE_UP, BELOW_ONE = 0x3F80, 0x3F81, 0x3F7F  # 1, 1 + 2^-7, 1 - 2^-8
HALF_ULP_AT_ONE = 0x3B80  # 2^-8: 1 + 2^-8 is the tie between 1 and 1 + 2^-7
MAX, INF, NINF, NAN = 0x7F7F, 0x7F80, 0xFF80, 0x7FC0
ZERO, NZERO, SUBNORMAL, MIN_NORMAL = 0x0000, 0x8000, 0x0001, 0x0080
#: Hard operands for element-wise cases: every pair of these is tried.
SPECIALS = [ONE, ONE_UP, BELOW_ONE, HALF_ULP_AT_ONE, 0xBB80, MAX, 0xFF7F, INF, NINF, NAN, ZERO, NZERO,
            SUBNORMAL, 0x8001, MIN_NORMAL, 0x3F88, 0x4000]
#: The same without NaN, for max and min: compiled, ``tl.maximum`` ignores a NaN operand (maxnum);
#: Triton 3.6's interpreter returns NaN (docs/grading.md lists it).
SPECIALS_NO_NAN = [s for s in SPECIALS if s != NAN]


def _negation_flips_the_sign() -> bool:
    """Triton 3.9 compiles ``-x`` as a sign flip (fneg); 3.6 as ``0 - x``, so -(+0) is +0 there."""
    import inspect

    from triton.language.semantic import TritonSemantic

    return "create_fneg" in inspect.getsource(TritonSemantic.minus)


#: How this Triton negates: the model follows it; against a GPU run on another Triton, zeros are
#: not compared (their sign is the only difference).
NEGATION_FLIPS_THE_SIGN = _negation_flips_the_sign()


def negate(bits: np.ndarray) -> np.ndarray:
    """``-x`` on bf16 bits, as this Triton compiles it."""
    if NEGATION_FLIPS_THE_SIGN:
        return bits ^ np.uint16(0x8000)
    return rne(np.float32(0) - ((bits.astype(np.uint32) << 16).view(np.float32)))


def bf16_tensor(bits: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(bits, dtype=np.uint16).view(np.int16)).view(torch.bfloat16)


def bits_of(tensor: torch.Tensor) -> np.ndarray:
    """The raw bits of a bf16/fp16 (uint16) or fp32 (uint32) tensor; other dtypes as they are."""
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype in (torch.bfloat16, torch.float16):
        return tensor.view(torch.int16).numpy().view(np.uint16)
    if tensor.dtype == torch.float32:
        return tensor.view(torch.int32).numpy().view(np.uint32)
    return tensor.numpy()


def values_of(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().double().numpy()


def rne(values) -> np.ndarray:
    """float32 values -> bf16 bits, rounded by torch (round to nearest even)."""
    return bits_of(torch.from_numpy(np.asarray(values, dtype=np.float32)).to(torch.bfloat16))


def exact_bf16(value) -> int:
    """The bits of a real number (Fraction or float) rounded once to bf16, nearest even."""
    value = Fraction(value)
    sign = 0x8000 if value < 0 else 0
    magnitude = abs(value)
    if magnitude == 0:
        return sign
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, -126)
    quantum = Fraction(2) ** (exponent - 7)
    units, rest = divmod(magnitude, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and units % 2 == 1):
        units += 1
    rounded = units * quantum
    if rounded >= Fraction(2) ** 128:
        return sign | INF
    return sign | int(rne([float(rounded)])[0]) & 0x7FFF


def exact_bits(values: np.ndarray) -> np.ndarray:
    return np.array([exact_bf16(v) if math.isfinite(v) else int(rne([v])[0]) for v in np.asarray(values, np.float64)],
                    dtype=np.uint16)


def random_bf16(rng: np.random.Generator, shape, spread: int = 6) -> np.ndarray:
    """Normal values times 2^k, k uniform in [-spread, spread], truncated to bf16 bits."""
    size = int(np.prod(shape))
    values = (rng.standard_normal(size) * 2.0 ** rng.integers(-spread, spread + 1, size)).astype(np.float32)
    return (values.view(np.uint32) >> 16).astype(np.uint16).reshape(shape)


def with_pairs(rng, specials) -> tuple[np.ndarray, np.ndarray]:
    """x, y of length N: every pair of `specials` first, random values after."""
    x, y = random_bf16(rng, (N,)), random_bf16(rng, (N,))
    pairs = np.array([(a, b) for a in specials for b in specials], dtype=np.uint16)
    x[:len(pairs)], y[:len(pairs)] = pairs[:, 0], pairs[:, 1]
    return x, y


# --- how outputs must agree ----------------------------------------------------------------

@dataclass
class Rule:
    kind: str  # "exact", "near_tie" or "bound"
    ties: np.ndarray | None = None  # near_tie: where one bf16 ulp is allowed
    bound: np.ndarray | None = None  # bound: the largest |difference| allowed, per element
    why: str = ""
    skip: np.ndarray | None = None  # elements not compared (the case says why)


@dataclass
class Expected:
    bits: np.ndarray  # the model's output (bits for floats, values for integers)
    model: Rule  # how the interpreter must agree with the model
    gpu: Rule  # how the interpreter must agree with a GPU's output


def _ordered(bits: np.ndarray) -> np.ndarray:
    """bf16 bits -> integers in the order of their values (adjacent values differ by 1)."""
    signed = bits.astype(np.int32)
    return np.where(signed & 0x8000, 0x8000 - signed, signed)


def _as_float(array: np.ndarray) -> np.ndarray:
    if array.dtype == np.uint16:
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if array.dtype == np.uint32:
        return array.view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def disagreement(rule: Rule, got: np.ndarray, want: np.ndarray) -> str | None:
    """None when ``got`` agrees with ``want`` under ``rule``, else a sentence naming elements."""
    got, want = np.asarray(got).reshape(-1), np.asarray(want).reshape(-1)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    g, w = _as_float(got), _as_float(want)
    both_nan = np.isnan(g) & np.isnan(w)
    if rule.kind == "bound":
        with np.errstate(invalid="ignore"):
            bad = ~both_nan & (g != w) & ~(np.abs(g - w) <= np.asarray(rule.bound).reshape(-1))
    else:
        bad = ~both_nan & (got != want)
        if rule.kind == "near_tie":
            near = np.asarray(rule.ties).reshape(-1) & (np.abs(_ordered(got) - _ordered(want)) <= 1)
            bad &= ~near
    if rule.skip is not None:
        bad &= ~np.asarray(rule.skip).reshape(-1)
    if not bad.any():
        return None
    where = np.flatnonzero(bad)
    shown = ", ".join(f"[{i}] {g[i]!r} vs {w[i]!r}" for i in where[:4])
    return f"{len(where)} of {got.size} differ ({rule.kind}{': ' + rule.why if rule.why else ''}): {shown}"


EXACT = Rule("exact")


def _signed_zeros_differ(bits: np.ndarray, zeros: np.ndarray) -> Expected:
    """Exact; against a GPU, not where ``-x`` of a zero is taken (Triton 3.6 gives +0, 3.9 -0)."""
    return Expected(bits, EXACT, Rule("exact", skip=zeros, why="Triton 3.6 negates as 0 - x"))


def exact(bits: np.ndarray) -> Expected:
    return Expected(bits, EXACT, EXACT)


def near_tie(bits: np.ndarray, exact_values: np.ndarray, relative: np.ndarray | float, why: str,
             skip: np.ndarray | None = None) -> Expected:
    """Exact, except where ``exact_values`` is within ``relative`` of a bf16 tie."""
    values = np.abs(np.asarray(exact_values, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log2(np.where(values > 0, values, 1.0)))
        quantum = 2.0 ** (np.maximum(exponent, -126) - 7)
        offset = values / quantum - np.floor(values / quantum)  # 0.5 at a tie
        ties = np.isfinite(values) & (np.abs(offset - 0.5) * quantum <= values * relative)
    rule = Rule("near_tie", ties=ties, why=why, skip=skip)
    return Expected(bits, rule, rule)


# --- kernels -------------------------------------------------------------------------------

@triton.jit
def binary_kernel(x_ptr, y_ptr, add_ptr, sub_ptr, mul_ptr, div_ptr, where_ptr, less_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(add_ptr + offs, x + y, mask=mask)
    tl.store(sub_ptr + offs, x - y, mask=mask)
    tl.store(mul_ptr + offs, x * y, mask=mask)
    tl.store(div_ptr + offs, x / y, mask=mask)  # Triton divides bf16 in float32; the store rounds
    tl.store(where_ptr + offs, tl.where(x > y, x, -y), mask=mask)
    tl.store(less_ptr + offs, (x < y).to(tl.int8), mask=mask)


@triton.jit
def minmax_kernel(x_ptr, y_ptr, max_ptr, min_ptr, neg_ptr, abs_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(max_ptr + offs, tl.maximum(x, y), mask=mask)
    tl.store(min_ptr + offs, tl.minimum(x, y), mask=mask)
    tl.store(neg_ptr + offs, -x, mask=mask)
    tl.store(abs_ptr + offs, tl.abs(x), mask=mask)


@triton.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.fma(x, y, z), mask=mask)


@triton.jit
def exp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.exp(x.to(tl.float32)).to(tl.bfloat16), mask=mask)


@triton.jit
def scale_kernel(x_ptr, scaled_ptr, shifted_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # Python floats next to a bf16 tensor become bf16 constants (float32, then rounded).
    tl.store(scaled_ptr + offs, x * 0.1, mask=mask)
    tl.store(shifted_ptr + offs, x + 1e-3, mask=mask)


@triton.jit
def full_kernel(out_ptr, VALUE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full([BLOCK], VALUE, tl.bfloat16))


@triton.jit
def rows_kernel(x_ptr, max_ptr, min_ptr, argmax_ptr, sum_ptr, cumsum_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(max_ptr + tl.arange(0, M), tl.max(x, axis=1))
    tl.store(min_ptr + tl.arange(0, M), tl.min(x, axis=1))
    tl.store(argmax_ptr + tl.arange(0, M), tl.argmax(x, axis=1))
    tl.store(sum_ptr + tl.arange(0, M), tl.sum(x.to(tl.float32), axis=1))
    tl.store(cumsum_ptr + rows * N + cols, tl.cumsum(x.to(tl.float32), axis=1))


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N: tl.constexpr):
    # One row per program, summed in bf16: every partial sum is rounded to bf16.
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + row, tl.sum(x))


@triton.jit
def dot_kernel(a_ptr, b_ptr, out32_ptr, out16_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn)
    acc = tl.dot(a, b)  # float32 accumulation
    tl.store(out32_ptr + rm * N + rn, acc)
    tl.store(out16_ptr + rm * N + rn, acc.to(tl.bfloat16))


@triton.jit
def convert_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask).to(dst_ptr.dtype.element_ty), mask=mask)


@triton.jit
def convert_rtz_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask)
    tl.store(dst_ptr + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"), mask=mask)


# --- cases ---------------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    make_inputs: Callable[[np.random.Generator], dict[str, torch.Tensor]]
    launch: Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]]
    model: Callable[[dict[str, torch.Tensor]], dict[str, Expected]]


def _grid(n):
    return (triton.cdiv(n, BLOCK),)


def _empty_like(x, dtype=torch.bfloat16):
    return torch.empty(x.shape, dtype=dtype, device=x.device)


def _f32(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().float().numpy()


# binary ------------------------------------------------------------------------------------

def _tiny(values) -> np.ndarray:
    """Nonzero and below the smallest normal float32: where an approximate division may flush."""
    values = np.abs(np.asarray(values, dtype=np.float64))
    return (values > 0) & (values < 2.0 ** -126)


def _binary_inputs(rng):
    x, y = with_pairs(rng, SPECIALS)
    return {"x": bf16_tensor(x), "y": bf16_tensor(y)}


def _binary_launch(inputs):
    x, y = inputs["x"], inputs["y"]
    out = {k: _empty_like(x) for k in ("add", "sub", "mul", "div", "where")}
    out["less"] = _empty_like(x, torch.int8)
    binary_kernel[_grid(x.numel())](x, y, out["add"], out["sub"], out["mul"], out["div"], out["where"], out["less"],
                                    x.numel(), BLOCK=BLOCK)
    return out


def _binary_model(inputs):
    x, y = _f32(inputs["x"]), _f32(inputs["y"])
    with np.errstate(all="ignore"):
        quotient = x.astype(np.float64) / y.astype(np.float64)
        return {
            # float32 arithmetic on bf16 values is exact for + - * (before the one rounding).
            "add": exact(rne(x + y)),
            "sub": exact(rne(x - y)),
            "mul": exact(rne(x * y)),
            # float32 division, then the store rounds: the GPU's div.full is within 2 float32 ulp.
            "div": near_tie(rne(quotient.astype(np.float32)), quotient, 2.0 ** -21,
                            "the GPU's float32 division (div.full) is within 2 ulp",
                            skip=_tiny(x) | _tiny(y) | _tiny(quotient) | (np.abs(quotient) > 2.0 ** 126)),
            "where": _signed_zeros_differ(np.where(x > y, bits_of(inputs["x"]), negate(bits_of(inputs["y"]))),
                                          ~(x > y) & (y == 0)),
            "less": exact((x < y).astype(np.int8)),
        }


# max / min / neg / abs ---------------------------------------------------------------------

def _minmax_inputs(rng):
    x, y = with_pairs(rng, SPECIALS_NO_NAN)
    return {"x": bf16_tensor(x), "y": bf16_tensor(y)}


def _minmax_launch(inputs):
    x, y = inputs["x"], inputs["y"]
    out = {k: _empty_like(x) for k in ("max", "min", "neg", "abs")}
    minmax_kernel[_grid(x.numel())](x, y, out["max"], out["min"], out["neg"], out["abs"], x.numel(), BLOCK=BLOCK)
    return out


def _minmax_model(inputs):
    x, y = _f32(inputs["x"]), _f32(inputs["y"])
    xb = bits_of(inputs["x"])
    # max(+0, -0): IEEE maxNum may return either zero, so those pairs are not compared.
    zeros = Rule("exact", skip=(x == 0) & (y == 0), why="max/min of two zeros may return either")
    return {"max": Expected(rne(np.maximum(x, y)), zeros, zeros), "min": Expected(rne(np.minimum(x, y)), zeros, zeros),
            "neg": _signed_zeros_differ(negate(xb), x == 0), "abs": exact(xb & np.uint16(0x7FFF))}


# fma ---------------------------------------------------------------------------------------

def _fma_inputs(rng):
    x, y, z = random_bf16(rng, (N,)), random_bf16(rng, (N,)), random_bf16(rng, (N,), spread=10)
    # x * y exactly on a tie (1.0625^2 = 1.125 + 2^-8) or just below one, plus a z that decides it:
    # rounded once (fma.rn.bf16) the tiny z tips the tie; rounded in float32 first, it is lost.
    crafted = [(0x3F88, 0x3F88, 0x3080), (0x3F88, 0x3F88, 0xB080), (0x3F88, 0x3F88, ZERO),
               (ONE_UP, BELOW_ONE, 0x3800), (ONE_UP, BELOW_ONE, 0x3801), (0xBF88, 0x3F88, 0x3080),
               (MAX, 0x4000, NINF), (MAX, 0x4000, 0xFF7F), (SUBNORMAL, 0x3F00, ZERO), (NZERO, ONE, NZERO)]
    for i, (a, b, c) in enumerate(crafted):
        x[i], y[i], z[i] = a, b, c
    return {"x": bf16_tensor(x), "y": bf16_tensor(y), "z": bf16_tensor(z)}


def _fma_launch(inputs):
    x = inputs["x"]
    out = _empty_like(x)
    fma_kernel[_grid(x.numel())](x, inputs["y"], inputs["z"], out, x.numel(), BLOCK=BLOCK)
    return {"out": out}


def _fma_model(inputs):
    x, y, z = (_f32(inputs[k]).astype(np.float64) for k in "xyz")
    want = []
    for a, b, c in zip(x, y, z):
        total = Fraction(a) * Fraction(b) + Fraction(c) if all(math.isfinite(v) for v in (a, b, c)) else None
        if total:
            want.append(exact_bf16(total))
        else:  # an infinity, a NaN, or an exact zero (whose sign float64 gets right)
            with np.errstate(all="ignore"):
                want.append(int(rne([a * b + c])[0]))
    return {"out": exact(np.array(want, dtype=np.uint16))}


# exp ---------------------------------------------------------------------------------------

def _exp_inputs(rng):
    x = random_bf16(rng, (N,), spread=3)
    x[:6] = [ZERO, NZERO, NINF, INF, NAN, 0x42B2]  # exp(89) overflows
    return {"x": bf16_tensor(x)}


def _exp_launch(inputs):
    x = inputs["x"]
    out = _empty_like(x)
    exp_kernel[_grid(x.numel())](x, out, x.numel(), BLOCK=BLOCK)
    return {"out": out}


def _exp_model(inputs):
    x = _f32(inputs["x"]).astype(np.float64)
    with np.errstate(all="ignore"):
        value = np.exp(x)
    # ex2.approx.f32 of x * log2(e): about 2^-22 relative, plus |x| * 2^-24 from rounding the product.
    relative = 2.0 ** -21 + np.abs(x) * 2.0 ** -23
    return {"out": near_tie(rne(value.astype(np.float32)), value, relative,
                            "the GPU's exp is ex2.approx.f32 of x * log2(e)")}


# constants ---------------------------------------------------------------------------------

FULL_VALUES = [0.1, 1 / 3, 3.14159, -2.5e-3, 1e-7, 1e30]


def _scale_inputs(rng):
    x = random_bf16(rng, (N,))
    return {"x": bf16_tensor(x)}


def _scale_launch(inputs):
    x = inputs["x"]
    out = {"scaled": _empty_like(x), "shifted": _empty_like(x)}
    scale_kernel[_grid(x.numel())](x, out["scaled"], out["shifted"], x.numel(), BLOCK=BLOCK)
    full = torch.empty((len(FULL_VALUES), 16), dtype=torch.bfloat16, device=x.device)
    for i, value in enumerate(FULL_VALUES):
        full_kernel[(1,)](full[i], VALUE=value, BLOCK=16)
    out["full"] = full
    return out


def _scale_model(inputs):
    x = _f32(inputs["x"])
    tenth = _f32(bf16_tensor(rne([0.1])))[0]  # 0.1 -> float32 -> bf16, as the semantic casts it
    shift = _f32(bf16_tensor(rne([1e-3])))[0]
    # tl.full(.., v, tl.bfloat16): Triton's get_bf16 builds APFloat(bf16, std::to_string(float(v))).
    full = [exact_bf16(Fraction("%f" % float(np.float32(v)))) for v in FULL_VALUES]
    return {"scaled": exact(rne(x * tenth)), "shifted": exact(rne(x + shift)),
            "full": exact(np.repeat(np.array(full, dtype=np.uint16)[:, None], 16, axis=1))}


# rows: max, min, argmax, float32 sum and cumsum ---------------------------------------------

ROWS, COLS = 16, 64


def _rows_inputs(rng):
    x = random_bf16(rng, (ROWS, COLS))
    x[0, :4] = [INF, NINF, NZERO, ZERO]
    x[1, :] = x[1, 0]  # a row of equal values: argmax takes the first
    x[2, :] = NINF
    return {"x": bf16_tensor(x)}


def _rows_launch(inputs):
    x = inputs["x"]
    out = {"max": _empty_like(x[:, 0]), "min": _empty_like(x[:, 0]),
           "argmax": torch.empty(ROWS, dtype=torch.int32, device=x.device),
           "sum": torch.empty(ROWS, dtype=torch.float32, device=x.device),
           "cumsum": torch.empty((ROWS, COLS), dtype=torch.float32, device=x.device)}
    rows_kernel[(1,)](x, out["max"], out["min"], out["argmax"], out["sum"], out["cumsum"], ROWS, COLS)
    return out


def _sum_bound(values: np.ndarray, count: int, unit: float, orders: int) -> np.ndarray:
    """``orders`` sums of ``count`` terms, each order within (count - 1) * unit * sum|x| of exact."""
    return orders * (count - 1) * unit * values + 1e-45


def _rows_model(inputs):
    x = _f32(inputs["x"]).astype(np.float64)
    finite = np.where(np.isfinite(x), x, 0)
    abs_sum = np.abs(finite).sum(axis=1)
    u32 = 2.0 ** -24
    exact_sum = x.sum(axis=1)
    cumsum = np.cumsum(x, axis=1)
    cum_abs = np.cumsum(np.abs(finite), axis=1)
    steps = np.arange(COLS)[None, :] + 1
    why = "float32 sums in any order are within (n - 1) * 2^-24 * sum|x| of the exact sum"
    return {
        "max": exact(rne(x.max(axis=1))),
        "min": exact(rne(x.min(axis=1))),
        "argmax": exact(x.argmax(axis=1).astype(np.int32)),
        "sum": Expected(exact_sum.astype(np.float32).view(np.uint32),
                        Rule("bound", bound=_sum_bound(abs_sum, COLS, u32, 1), why=why),
                        Rule("bound", bound=_sum_bound(abs_sum, COLS, u32, 2), why=why)),
        "cumsum": Expected(cumsum.astype(np.float32).view(np.uint32),
                           Rule("bound", bound=2 * (steps - 1) * u32 * cum_abs + 1e-45, why=why),
                           Rule("bound", bound=4 * (steps - 1) * u32 * cum_abs + 1e-45, why=why)),
    }


# bf16 sums ---------------------------------------------------------------------------------

def _butterfly_sum(row: np.ndarray) -> int:
    """bf16 sum of a row of 2^k values the way one warp's shuffles add them (torch bf16 adds)."""
    values = torch.from_numpy(row.astype(np.float32)).to(torch.bfloat16)
    while values.numel() > 1:
        half = values.numel() // 2
        values = values[:half] + values[half:]
    return int(bits_of(values)[0])


def _sum_warp_inputs(rng):
    return {"x": bf16_tensor(random_bf16(rng, (16, 32)))}


def _sum_block_inputs(rng):
    return {"x": bf16_tensor(random_bf16(rng, (8, 1024)))}


def _row_sum_launch(inputs, num_warps):
    x = inputs["x"]
    out = _empty_like(x[:, 0])
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], num_warps=num_warps)
    return {"out": out}


def _sum_warp_model(inputs):
    x = _f32(inputs["x"])
    return {"out": exact(np.array([_butterfly_sum(r) for r in x], dtype=np.uint16))}


def _sum_block_model(inputs):
    x = _f32(inputs["x"])
    butterfly = np.array([_butterfly_sum(r) for r in x], dtype=np.uint16)
    abs_sum = np.abs(x.astype(np.float64)).sum(axis=1)
    # Compiled with 4 warps: 8 values per thread added in turn, 5 shuffle levels, 2 across warps;
    # here 10 levels. A value passes through at most 15 + 10 roundings of 2^-8 relative.
    bound = (15 + 10) * 2.0 ** -8 * abs_sum
    why = "bf16 sums in two orders (the GPU's layout, the interpreter's halves)"
    return {"out": Expected(butterfly, EXACT, Rule("bound", bound=bound, why=why))}


# dot ---------------------------------------------------------------------------------------

DOT_M, DOT_N, DOT_K = 32, 32, 64


def _dot_inputs(rng):
    return {"a": bf16_tensor(random_bf16(rng, (DOT_M, DOT_K), spread=2)),
            "b": bf16_tensor(random_bf16(rng, (DOT_K, DOT_N), spread=2))}


def _dot_launch(inputs):
    a, b = inputs["a"], inputs["b"]
    out32 = torch.empty((DOT_M, DOT_N), dtype=torch.float32, device=a.device)
    out16 = torch.empty((DOT_M, DOT_N), dtype=torch.bfloat16, device=a.device)
    dot_kernel[(1,)](a, b, out32, out16, DOT_M, DOT_N, DOT_K)
    return {"out32": out32, "out16": out16}


def _dot_model(inputs):
    a, b = _f32(inputs["a"]).astype(np.float64), _f32(inputs["b"]).astype(np.float64)
    product = a @ b  # bf16 products are exact; float64 sums of 64 of them are near exact
    magnitude = np.abs(a) @ np.abs(b)
    why = "float32 accumulation of K exact bf16 products, in any order"
    bound32 = lambda units: units * (DOT_K - 1) * 2.0 ** -24 * magnitude + 1e-45  # noqa: E731
    # Rounded to bf16: wherever the float32 sums may land on either side of a tie, one ulp.
    relative = (DOT_K - 1) * 2.0 ** -22 * magnitude / np.maximum(np.abs(product), 1e-30)
    return {
        # Against the GPU: 1 unit for the interpreter plus 2 for tensor cores, in case their
        # accumulator truncates instead of rounding.
        "out32": Expected(product.astype(np.float32).view(np.uint32), Rule("bound", bound=bound32(1), why=why),
                          Rule("bound", bound=bound32(3), why=why)),
        "out16": near_tie(rne(product.astype(np.float32)), product, relative, why),
    }


# casts -------------------------------------------------------------------------------------

def _f32_bits(*words) -> np.ndarray:
    return np.array(words, dtype=np.uint32).view(np.float32)


def _cast_f32_inputs(rng):
    x = (rng.standard_normal(N) * 2.0 ** rng.integers(-20, 21, N)).astype(np.float32)
    x[:256] = ((random_bf16(rng, (256,)).astype(np.uint32) << 16) | 0x8000).view(np.float32)  # exactly on a tie
    # the tie above the largest bf16 (rounds to inf), inf, NaN, -0, subnormals
    x[256:264] = _f32_bits(0x7F7F8000, 0x7F7F7FFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x80000000, 0x00011111,
                           0x80000001)
    return {"x": torch.from_numpy(x)}


def _cast_f64_inputs(rng):
    # Just above or below a bf16 tie by less than half a float32 ulp: rounding to float32 first
    # lands on the tie (and goes to even); rounded once, it goes the way the value lies.
    ties = (((random_bf16(rng, (256,)).astype(np.uint32) << 16) | 0x8000).view(np.float32)).astype(np.float64)
    x = rng.standard_normal(N) * 2.0 ** rng.integers(-20, 21, N)
    x[:256], x[256:512] = ties * (1 + 2.0 ** -40), ties * (1 - 2.0 ** -40)
    return {"x": torch.from_numpy(x)}


def _cast_int_inputs(rng):
    x = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    x[:8] = [0, 1, -1, 257, 258, 259, 2**24 + 1, -(2**31)]  # 257: the tie between 256 and 258
    return {"x": torch.from_numpy(x)}


def _cast_f16_inputs(rng):
    return {"x": torch.from_numpy((rng.standard_normal(N) * 2.0 ** rng.integers(-14, 15, N)).astype(np.float16))}


def _cast_from_bf16_inputs(rng):
    return {"x": bf16_tensor(random_bf16(rng, (N,), spread=12))}


def _convert(inputs, dtypes, kernel=None):
    x = inputs["x"]
    out = {}
    for name, dtype in dtypes.items():
        out[name] = _empty_like(x, dtype)
        (kernel or convert_kernel)[_grid(x.numel())](x, out[name], x.numel(), BLOCK=BLOCK)
    return out


def _cast_f32_model(inputs):
    return {"bf16": exact(rne(inputs["x"].numpy()))}


def _cast_rtz_model(inputs):
    wide = inputs["x"].numpy().view(np.uint32)
    nan = np.isnan(inputs["x"].numpy())
    return {"bf16": exact(np.where(nan, (wide >> 16) | 0x40, wide >> 16).astype(np.uint16))}


def _cast_from_bf16_model(inputs):
    x = _f32(inputs["x"]).astype(np.float64)
    return {"int32": exact(np.trunc(x).astype(np.int32)),
            "fp16": exact(bits_of(torch.from_numpy(x.astype(np.float32)).to(torch.float16))),
            "fp64": exact(x)}


CASES = [
    Case("binary", _binary_inputs, _binary_launch, _binary_model),
    Case("minmax", _minmax_inputs, _minmax_launch, _minmax_model),
    Case("fma", _fma_inputs, _fma_launch, _fma_model),
    Case("exp", _exp_inputs, _exp_launch, _exp_model),
    Case("constants", _scale_inputs, _scale_launch, _scale_model),
    Case("rows", _rows_inputs, _rows_launch, _rows_model),
    Case("sum_warp", _sum_warp_inputs, lambda inputs: _row_sum_launch(inputs, 1), _sum_warp_model),
    Case("sum_block", _sum_block_inputs, lambda inputs: _row_sum_launch(inputs, 4), _sum_block_model),
    Case("dot", _dot_inputs, _dot_launch, _dot_model),
    Case("cast_f32", _cast_f32_inputs, lambda i: _convert(i, {"bf16": torch.bfloat16}), _cast_f32_model),
    Case("cast_f32_rtz", _cast_f32_inputs, lambda i: _convert(i, {"bf16": torch.bfloat16}, convert_rtz_kernel),
         _cast_rtz_model),
    Case("cast_f64", _cast_f64_inputs, lambda i: _convert(i, {"bf16": torch.bfloat16}),
         lambda i: {"bf16": exact(exact_bits(i["x"].numpy()))}),
    Case("cast_int", _cast_int_inputs, lambda i: _convert(i, {"bf16": torch.bfloat16}),
         lambda i: {"bf16": exact(exact_bits(i["x"].numpy().astype(np.float64)))}),
    Case("cast_f16", _cast_f16_inputs, lambda i: _convert(i, {"bf16": torch.bfloat16}),
         lambda i: {"bf16": exact(rne(i["x"].numpy().astype(np.float32)))}),
    Case("cast_from_bf16", _cast_from_bf16_inputs,
         lambda i: _convert(i, {"int32": torch.int32, "fp16": torch.float16, "fp64": torch.float64}),
         _cast_from_bf16_model),
]


def inputs_for(case: Case) -> dict[str, torch.Tensor]:
    """The case's inputs, from SEED and the case's name (the same on every machine)."""
    import zlib

    return case.make_inputs(np.random.default_rng([SEED, zlib.crc32(case.name.encode())]))


def run(case: Case, inputs: dict[str, torch.Tensor], device: str) -> dict[str, torch.Tensor]:
    outputs = case.launch({k: v.to(device) for k, v in inputs.items()})
    if device == "cuda":
        torch.cuda.synchronize()
    return {k: v.cpu() for k, v in outputs.items()}


# --- the data file -------------------------------------------------------------------------

def encode(tensor: torch.Tensor) -> dict:
    tensor = tensor.detach().cpu().contiguous()
    raw = tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
    return {"dtype": str(tensor.dtype).removeprefix("torch."), "shape": list(tensor.shape),
            "base64": base64.b64encode(raw).decode()}


def decode(record: dict) -> torch.Tensor:
    dtype = getattr(torch, record["dtype"])
    raw = bytearray(base64.b64decode(record["base64"]))
    flat = torch.frombuffer(raw, dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
    return flat.view(dtype).reshape(record["shape"]).clone()
