"""bfloat16 arithmetic in Triton's interpreter, computed the way an NVIDIA GPU computes it.

The interpreter (``triton/runtime/interpreter.py``) keeps a bf16 tensor as the raw ``uint16``
bits of each value and hands those bits to NumPy: ``x + y`` adds two integers, ``x < y``
compares them, ``tl.max`` finds the largest bit pattern, ``tl.dot`` multiplies bit patterns, and
a float32 -> bf16 cast truncates instead of rounding (triton-lang/triton#4972, #10945, #11584,
#11604). A textbook ``tl.store(out_ptr + offs, x + y)`` on bf16 gives values near 1e35.

`install` wraps the few interpreter functions every bf16 value flows through. Each wrapper widens
bf16 operands to float32 (exact), calls the interpreter's own function on float32, and rounds a
float result back to bf16 bits where the GPU rounds (`grader.learner.interpreter_fixes.bits`):

* element-wise arithmetic, comparisons, ``tl.where``, ``tl.maximum``/``minimum``, clamp, and
  unary math (``InterpreterBuilder.binary_op``, ``unary_op``, ``ternary_op``, ``create_erf``,
  ``create_rsqrt``): float32 then one rounding, which equals the correctly rounded bf16 result
  for + - * / and sqrt (24 bits >= 2 * 8 + 2: rounding twice cannot differ);
* ``tl.fma``: rounded once (``fma.rn.bf16``), `bits.fma`;
* ``tl.dot``: float32 products and accumulation (a bf16 product is exact in float32);
* casts (``cast_impl``, ``create_fp_to_fp``, ``get_bf16``): round to nearest even, or toward
  zero when asked, from float32, float64 and integers;
* reductions (``ReduceOps.apply_impl``): max, min, argmax, argmin exactly; ``tl.sum`` in bf16
  pairs the halves of the row level by level, rounding each level to bf16, which is the order of
  a GPU warp's butterfly (lane i adds lane i ^ 16, then ^ 8, ...); ``tl.reduce`` with your own
  combine function runs it on bf16 values, each step rounded;
* ``tl.cumsum``/``tl.cumprod`` in bf16 (``ScanOps``): one rounding per step, left to right.

Loads and stores are untouched: they move the exact bits.
"""

from __future__ import annotations

import numpy as np

from grader.learner.interpreter_fixes import bits

#: Functions wrapped here: (owner in the interpreter module, attribute).
WRAPPED = (
    ("InterpreterBuilder", "binary_op"),
    ("InterpreterBuilder", "unary_op"),
    ("InterpreterBuilder", "ternary_op"),
    ("InterpreterBuilder", "create_fma"),
    ("InterpreterBuilder", "create_erf"),
    ("InterpreterBuilder", "create_rsqrt"),
    ("InterpreterBuilder", "create_dot"),
    ("InterpreterBuilder", "cast_impl"),
    ("InterpreterBuilder", "create_fp_to_fp"),
    ("ReduceOps", "apply_impl"),
    ("ScanOps", "cumsum"),
    ("ScanOps", "cumprod"),
)
#: Functions the wrappers rely on without replacing them (they must still route every float
#: operation through the wrapped ones, and keep bf16 as uint16).
RELIED_ON = (
    ("", "_get_np_dtype"),
    ("TensorHandle", "__post_init__"),
    ("ReduceScanOpInterface", "to_tensor"),
    ("ReduceOps", "min_max"),
    ("ReduceOps", "generic_reduce"),
    ("ScanOps", "apply_impl"),
)
#: Builder methods that must be thin routes into ``binary_op`` / ``unary_op`` / ``ternary_op`` /
#: ``cast_impl`` (checked by `routes_are_thin`, not by hash: they are one line each).
ROUTED = {
    "binary_op": ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem", "create_precise_divf",
                  "create_minimumf", "create_minnumf", "create_maximumf", "create_maxnumf",
                  "create_fcmpOLT", "create_fcmpOGT", "create_fcmpOLE", "create_fcmpOGE", "create_fcmpOEQ",
                  "create_fcmpONE", "create_fcmpULT", "create_fcmpUGT", "create_fcmpULE", "create_fcmpUGE",
                  "create_fcmpUEQ", "create_fcmpUNE"),
    "unary_op": ("create_exp", "create_exp2", "create_log", "create_log2", "create_sqrt", "create_precise_sqrt",
                 "create_sin", "create_cos", "create_floor", "create_ceil"),
    "ternary_op": ("create_select",),
    "cast_impl": ("create_fp_ext", "create_fp_trunc", "create_si_to_fp", "create_ui_to_fp", "create_fp_to_si",
                  "create_fp_to_ui"),
}


def routes_are_thin(interpreter) -> bool:
    """Every method in `ROUTED` is ``lambda self, ...: self.<route>(...)`` in this interpreter."""
    import inspect

    builder = interpreter.InterpreterBuilder
    for route, names in ROUTED.items():
        for name in names:
            member = builder.__dict__.get(name)
            if member is None:
                return False
            try:
                source = inspect.getsource(member).strip()
            except (OSError, TypeError):
                return False
            if not (source.startswith(f"{name} = lambda self") and f"self.{route}(" in source):
                return False
    return True


def install(interpreter) -> None:
    """Wrap the functions in `WRAPPED` (and add or replace ``get_bf16``) in ``interpreter``."""
    tl = interpreter.tl
    TensorHandle = interpreter.TensorHandle
    builder = interpreter.InterpreterBuilder
    bf16, fp32 = tl.bfloat16, tl.float32
    rtz = interpreter._ir.ROUNDING_MODE.RTZ

    def is_bf16(handle) -> bool:
        dtype = getattr(handle, "dtype", None)
        return (dtype is not None and getattr(dtype, "scalar", dtype) == bf16
                and getattr(handle.data, "dtype", None) == np.uint16)

    def widen(handle):
        return TensorHandle(bits.to_float32(handle.data), fp32) if is_bf16(handle) else handle

    def narrow(handle, rounding: str = "rtne"):
        return TensorHandle(bits.from_float(handle.data, rounding), bf16)

    def is_fp8(dtype) -> bool:
        return dtype.is_floating() and dtype.primitive_bitwidth == 8

    # --- element-wise ------------------------------------------------------------------------

    binary_op = builder.binary_op

    def bf16_binary_op(self, lhs, rhs, op):
        if not (is_bf16(lhs) or is_bf16(rhs)):
            return binary_op(self, lhs, rhs, op)
        out = binary_op(self, widen(lhs), widen(rhs), op)
        if out.data.dtype.kind == "f":
            return narrow(out)
        return TensorHandle(out.data, lhs.dtype.scalar)  # a comparison: booleans, as before

    unary_op = builder.unary_op

    def bf16_unary_op(self, arg, op):
        if not is_bf16(arg):
            return unary_op(self, arg, op)
        out = unary_op(self, widen(arg), op)
        return narrow(out) if out.data.dtype.kind == "f" else out

    ternary_op = builder.ternary_op

    def bf16_ternary_op(self, lhs, rhs, other, op):
        if not (is_bf16(lhs) or is_bf16(rhs) or is_bf16(other)):
            return ternary_op(self, lhs, rhs, other, op)
        out = ternary_op(self, widen(lhs), widen(rhs), widen(other), op)
        return narrow(out) if is_bf16(other) and out.data.dtype.kind == "f" else out

    create_fma = builder.create_fma

    def bf16_create_fma(self, x, y, z):
        if not is_bf16(z):
            return create_fma(self, x, y, z)
        return TensorHandle(bits.fma(widen(x).data, widen(y).data, widen(z).data), bf16)

    def unary_through_float32(original):
        def wrapper(self, arg):
            if not is_bf16(arg):
                return original(self, arg)
            return narrow(original(self, widen(arg)))

        wrapper.__name__ = original.__name__
        return wrapper

    create_dot = builder.create_dot

    def bf16_create_dot(self, a, b, d, *args, **kwargs):
        if not (is_bf16(a) or is_bf16(b) or is_bf16(d)):
            return create_dot(self, a, b, d, *args, **kwargs)
        out = create_dot(self, widen(a), widen(b), widen(d), *args, **kwargs)
        return narrow(out) if is_bf16(d) else out

    # --- casts -------------------------------------------------------------------------------

    cast_impl = builder.cast_impl

    def to_bf16(self, src, rounding: str):
        """Any non-bf16 handle -> bf16, or None when the interpreter's own path should do it."""
        source = src.dtype.scalar
        if source.is_floating() and not is_fp8(source):
            return TensorHandle(bits.from_float(np.asarray(src.data), rounding), bf16)
        if source.is_int() or source.is_bool():
            return TensorHandle(bits.from_integers(np.asarray(src.data).astype(np.int64)), bf16)
        return None

    def bf16_cast_impl(self, src, dst_type):
        target = dst_type.scalar
        if is_bf16(src):
            if target == bf16:
                return TensorHandle(src.data.copy(), bf16)
            wide = widen(src)
            return wide if target == fp32 else cast_impl(self, wide, dst_type)
        if target == bf16:
            converted = to_bf16(self, src, "rtne")
            if converted is not None:
                return converted
        return cast_impl(self, src, dst_type)

    create_fp_to_fp = builder.create_fp_to_fp

    def bf16_create_fp_to_fp(self, src, dst_type, rounding_mode):
        target = dst_type.scalar
        if is_bf16(src):
            if target == bf16:
                return TensorHandle(src.data.copy(), bf16)
            wide = widen(src)
            if target == fp32:
                return wide
            if target in (tl.float16, tl.float64) and rounding_mode != rtz:
                # NumPy rounds float32 -> float16 to nearest even (the interpreter's bit-level
                # conversion rounds ties up and can lose the carry).
                return TensorHandle(wide.data.astype(np.float16 if target == tl.float16 else np.float64), target)
            return create_fp_to_fp(self, wide, dst_type, rounding_mode)
        if target == bf16:
            rounding = "rtz" if rounding_mode == rtz else "rtne"
            if is_fp8(src.dtype.scalar):  # fp8 -> float32 is exact, then one rounding
                wide = create_fp_to_fp(self, src, fp32, rounding_mode)
                return TensorHandle(bits.from_float(wide.data, rounding), bf16)
            converted = to_bf16(self, src, rounding)
            if converted is not None:
                return converted
        return create_fp_to_fp(self, src, dst_type, rounding_mode)

    def get_bf16(self, value):
        return TensorHandle(np.array([bits.constant(value)], dtype=np.uint16), bf16)

    # --- reductions and scans ----------------------------------------------------------------

    reduce_ops = interpreter.ReduceOps
    reduce_apply = reduce_ops.apply_impl
    standard = tl.standard
    exact_reductions = {getattr(standard, name) for name in (
        "_elementwise_max", "_elementwise_min", "_argmax_combine_tie_break_left", "_argmin_combine_tie_break_left",
        "_argmax_combine_tie_break_fast", "_argmin_combine_tie_break_fast") if hasattr(standard, name)}

    def wide_tensor(tensor):
        """A bf16 tl.tensor as a float32 one of the same shape (values exact)."""
        kind = tensor.type
        wide_type = tl.block_type(fp32, list(kind.shape)) if kind.is_block() else fp32
        return tl.core.tensor(TensorHandle(bits.to_float32(tensor.handle.data), fp32), wide_type)

    def narrow_tensor(tensor):
        if not isinstance(tensor, tl.core.tensor) or tensor.handle.dtype.scalar != fp32:
            return tensor
        kind = tensor.type
        narrow_type = tl.block_type(bf16, list(kind.shape)) if kind.is_block() else bf16
        return tl.core.tensor(TensorHandle(bits.from_float(tensor.handle.data), bf16), narrow_type)

    def bf16_reduce_apply(self, input):
        if not any(is_bf16(t.handle) for t in input):
            return reduce_apply(self, input)
        if self.combine_fn is standard._sum_combine:
            return tree_sum(self, input[0])
        if self.combine_fn in exact_reductions:
            # max, min and their arguments are exact in any precision: compare the float32 values.
            out = reduce_apply(self, tuple(wide_tensor(t) if is_bf16(t.handle) else t for t in input))
            if isinstance(out, (list, tuple)):
                return type(out)(narrow_tensor(t) for t in out)
            return narrow_tensor(out)
        return reduce_apply(self, input)  # your combine function: each step is a (fixed) bf16 operation

    def tree_sum(self, tensor):
        values = bits.to_float32(tensor.handle.data)
        axis = self.axis
        if axis is None:
            values = values.reshape(-1)
            axis = 0
        values = np.moveaxis(values, axis, -1)
        width = values.shape[-1]
        size = 1 << max(0, (width - 1).bit_length())
        # -0.0 is the identity of a float sum (-0 + -0 = -0, -0 + x = x).
        padded = np.full(values.shape[:-1] + (size,), -0.0, dtype=np.float32)
        padded[..., :width] = values
        while padded.shape[-1] > 1:
            half = padded.shape[-1] // 2
            padded = bits.to_float32(bits.from_float(padded[..., :half] + padded[..., half:]))
        total = padded[..., 0]
        if self.keep_dims:
            if self.axis is None:
                total = total.reshape((1,) * tensor.handle.data.ndim)
            else:
                total = np.expand_dims(total, self.axis)
        result = bits.from_float(np.asarray(total, dtype=np.float32))
        return self.to_tensor(result if result.ndim else result[()], bf16)

    scan_ops = interpreter.ScanOps

    def sequential_scan(name, combine):
        original = getattr(scan_ops, name)

        def wrapper(self, input):
            if not is_bf16(input.handle):
                return original(self, input)
            values = np.moveaxis(bits.to_float32(input.handle.data), self.axis, 0).copy()
            for i in range(1, values.shape[0]):
                values[i] = bits.to_float32(bits.from_float(combine(values[i - 1], values[i])))
            return [self.to_tensor(bits.from_float(np.moveaxis(values, 0, self.axis)), bf16)]

        wrapper.__name__ = name
        return wrapper

    builder.binary_op = bf16_binary_op
    builder.unary_op = bf16_unary_op
    builder.ternary_op = bf16_ternary_op
    builder.create_fma = bf16_create_fma
    builder.create_erf = unary_through_float32(builder.create_erf)
    builder.create_rsqrt = unary_through_float32(builder.create_rsqrt)
    builder.create_dot = bf16_create_dot
    builder.cast_impl = bf16_cast_impl
    builder.create_fp_to_fp = bf16_create_fp_to_fp
    builder.get_bf16 = get_bf16
    reduce_ops.apply_impl = bf16_reduce_apply
    scan_ops.cumsum = sequential_scan("cumsum", np.add)
    scan_ops.cumprod = sequential_scan("cumprod", np.multiply)
