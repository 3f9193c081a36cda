"""bfloat16 as bits: the conversions a GPU makes, written with NumPy (no Triton, no torch).

Triton's interpreter keeps a bfloat16 tensor as the raw ``uint16`` bits of each value. The
functions here turn such bits into float32 (exact: bf16 is the top half of a float32) and turn
float32 or float64 values into bf16 bits the way NVIDIA GPUs do: round to nearest, ties to even
(``cvt.rn.bf16.f32``), or toward zero (``cvt.rz``) when a kernel asks for it.

A float64 value is rounded to bf16 *once*: rounding it to float32 first and then to bf16 could
round twice (a value just above a bf16 tie lands exactly on the tie in float32, and the tie goes
to even). It is first rounded to float32 *to odd* (truncate, then set the last bit when anything
was dropped), which keeps that information; 24 bits are more than the 8 + 2 that round-to-odd
needs for the second rounding to be exact.
"""

from __future__ import annotations

import numpy as np

#: A quiet NaN's bit: NaN inputs keep their sign and top payload bits, and stay NaN.
_QUIET = np.uint32(0x0040)


def to_float32(bits: np.ndarray) -> np.ndarray:
    """bf16 bits (uint16) -> float32 values, exactly."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _float32_to_bits_rne(values: np.ndarray) -> np.ndarray:
    wide = np.array(values, dtype=np.float32).view(np.uint32)  # a copy keeps 0-d shapes
    nan = (wide & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    with np.errstate(over="ignore"):
        # Add just under half a bf16 ulp, plus one when the kept part is odd: ties go to even.
        # A carry out of the mantissa bumps the exponent, and the largest values become inf.
        rounded = (wide + np.uint32(0x7FFF) + ((wide >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return np.where(nan, (wide >> np.uint32(16)) | _QUIET, rounded).astype(np.uint16)


def _float32_to_bits_rtz(values: np.ndarray) -> np.ndarray:
    wide = np.array(values, dtype=np.float32).view(np.uint32)
    nan = (wide & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, (wide >> np.uint32(16)) | _QUIET, wide >> np.uint32(16)).astype(np.uint16)


def float64_to_float32_odd(values: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded to odd: truncate toward zero, set the last bit if inexact."""
    wide = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = wide.astype(np.float32)
        back = nearest.astype(np.float64)
        inexact = np.isfinite(wide) & (back != wide)
        # Rounded away from zero: step back toward zero (inf becomes the largest float32).
        away = inexact & (np.abs(back) > np.abs(wide))
        truncated = np.where(away, np.nextafter(nearest, np.float32(0)), nearest).astype(np.float32)
    return (truncated.view(np.uint32) | inexact.astype(np.uint32)).view(np.float32)


def from_float(values, rounding: str = "rtne") -> np.ndarray:
    """float32 or float64 values (any float NumPy dtype) -> bf16 bits, rounded once.

    ``rounding`` is ``"rtne"`` (round to nearest, ties to even: what ``x.to(tl.bfloat16)`` does)
    or ``"rtz"`` (toward zero: ``fp_downcast_rounding="rtz"``).
    """
    values = np.asarray(values)
    if values.dtype == np.float64:
        values = float64_to_float32_odd(values)
    elif values.dtype != np.float32:
        values = values.astype(np.float32)  # float16, bool and small ints are exact in float32
    if rounding == "rtne":
        return _float32_to_bits_rne(values)
    if rounding == "rtz":
        return _float32_to_bits_rtz(values)
    raise ValueError(f"unknown rounding {rounding!r}")


def from_integers(values: np.ndarray) -> np.ndarray:
    """Integer values -> bf16 bits, rounded once (``cvt.rn.bf16.s32``): exact below 2**53."""
    return from_float(np.asarray(values).astype(np.float64))


def constant(value: float) -> int:
    """The bits of a bf16 constant made from a Python float, as Triton's compiler makes them.

    ``tl.full(shape, value, tl.bfloat16)`` reaches ``TritonOpBuilder.get_bf16(float v)`` in
    Triton's ``python/src/ir.cc``, which builds ``APFloat(bf16, std::to_string(v))``: the value
    goes through a C ``float`` and a ``"%f"`` string (six decimals) before it is rounded to bf16.
    So 1e-7 becomes ``"0.000000"``, zero, on a GPU. Done the same way here.
    """
    single = np.float32(value)
    if not np.isfinite(single):
        return int(from_float(np.array([single], dtype=np.float32))[0])
    text = "%f" % float(single)
    return int(from_float(np.array([float(text)], dtype=np.float64))[0])


def fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """x * y + z on bf16 values (given as float32), rounded once to bf16 bits (``fma.rn.bf16``).

    The product of two bf16 values is exact in float64; the sum is made exact with Knuth's
    two-sum, and rounded to odd in float64 when it is not, so the final rounding is the only one.
    """
    x, y, z = (np.asarray(a, dtype=np.float64) for a in np.broadcast_arrays(x, y, z))
    with np.errstate(over="ignore", invalid="ignore"):
        product = x * y
        total = product + z
        # Two-sum: the exact error of `total` (finite values only).
        virtual = total - product
        error = (product - (total - virtual)) + (z - virtual)
        inexact = np.isfinite(total) & (error != 0)
        odd = (total.view(np.uint64) & np.uint64(1)).astype(bool)
        # Round to odd: keep `total` when its last bit is odd, else step toward the exact value.
        step = np.where(error > 0, np.inf, -np.inf)
        total = np.where(inexact & ~odd, np.nextafter(total, step), total)
    return from_float(total)
