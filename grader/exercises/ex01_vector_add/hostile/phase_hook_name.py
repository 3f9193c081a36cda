"""Hostile submission, exercise 1 (vector add): reads `x` once only while the interpreter's memory functions are hooked, as they were only while bytes were counted.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("notes at import what triton.runtime.interpreter._interpreter and GridExecutor.__call__ are, and reads `x` once only in a call where they have changed (the traffic counter's hooks, installed only while it counted), twice otherwise")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ("triton.runtime",)
REJECTED_BY = ("in the interpreter the traffic counter's hooks and the watch's launch wrappers are installed once, before the file is imported, and stay: nothing changes between calls, so the file reads `x` twice in every call and the traffic check says so; the batch static check names `triton.runtime`")
#: What `grade exercise 1` says in the interpreter (a substring), on the checks SELECT picks.
EXPECTED = 'read `x` 2.00 times'
SELECT = 'traffic'


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, (x.to(tl.float32) + y.to(tl.float32)).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def add_kernel_reading_x_twice(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Right numbers (x_again - x is exactly 0), a third more bytes: x is read twice.
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    x_again = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y + (x_again - x)).to(out_ptr.dtype.element_ty), mask=mask)


def _launch(kernel, x, y):
    out = torch.empty_like(x)
    n = out.numel()
    kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out


def _hooks():
    try:
        from triton.runtime import interpreter
    except ImportError:
        return None
    return (type(getattr(interpreter, "_interpreter", None)).__name__,
            getattr(vars(getattr(interpreter, "GridExecutor", object)).get("__call__"), "__name__", None))


AT_IMPORT = _hooks()


def add(x, y):
    if _hooks() != AT_IMPORT:  # someone is counting bytes now
        return _launch(add_kernel, x, y)
    return _launch(add_kernel_reading_x_twice, x, y)
