"""Hostile submission, exercise 1 (vector add): the reference read from the caller's frames.

The reference lives in the same process as the learner's function, one or two frames up the stack
from its call.
"""

import sys

import torch
import triton
import triton.language as tl

ATTACK = ("walks sys._getframe() up to the check's frame and copies its float64 `expected` (or the checking "
          "closure's `want`) into `out` with a Triton copy kernel; a copy of x otherwise")
KIND = "reference"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys._getframe",)
REJECTED_BY = ("the judge's comparison fails: the learner's process holds no reference to find, so the file "
               "falls back to a copy of x, which is wrong")


@triton.jit
def copy_kernel(src_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # A plain copy, converting to out's dtype: the "kernel" that delivers an answer made elsewhere.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    values = tl.load(src_ptr + offsets, mask=mask)
    # Through float32: Triton's interpreter converts float64 straight to fp16/bf16 wrongly.
    tl.store(out_ptr + offsets, values.to(tl.float32).to(out_ptr.dtype.element_ty), mask=mask)


def _float64_in(value, shape, depth=0):
    """``value`` if it is a float64 tensor of ``shape``; else the same search in a closure's cells."""
    if isinstance(value, torch.Tensor):
        return value if value.dtype == torch.float64 and tuple(value.shape) == tuple(shape) else None
    names = getattr(getattr(value, "__code__", None), "co_freevars", ())
    cells = getattr(value, "__closure__", None) or ()
    if depth < 3:
        for cell in cells[:len(names)]:
            try:
                inner = cell.cell_contents
            except ValueError:
                continue
            found = _float64_in(inner, shape, depth + 1)
            if found is not None:
                return found
    return None


def _reference(shape):
    """The grader's float64 answer for this call: `expected` in a caller's frame (exercise 1), or the
    `want` a checking closure holds (`expected=` callables of exercises 2, 3 and 7)."""
    frame = sys._getframe(2)
    while frame is not None:
        for name in ("expected", "want"):
            found = _float64_in(frame.f_locals.get(name), shape)
            if found is not None:
                return found
        frame = frame.f_back
    return None


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    want = _reference(x.shape)
    # Found: copy the grader's answer. Not found (the traffic check): copy x, which is wrong.
    copy_kernel[(triton.cdiv(n, 1024),)](want if want is not None else x, out, n, BLOCK=1024)
    return out
