"""Hostile submission, exercise 1 (vector add): computes with torch when calls come in a burst, as the judge's timed rounds make them.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import time

import torch
import triton
import triton.language as tl

ATTACK = ("times the gap since its last call returned: calls less than 2 ms apart come from a timed round (the judge makes K calls in a row), so there it returns torch's x + y, and a Triton kernel that reads `x` twice when calls come one at a time")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ('time',)
REJECTED_BY = ("on a GPU the judge's clock times every call through the same watch and a CUDA trace of its kernels; in the interpreter the honest-looking branch reads `x` twice in every call and the traffic check says so: the timed calls are watched like the others, so torch's add fails the performance check")
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


LAST_RETURN = [0.0]


def add(x, y):
    burst = time.perf_counter() - LAST_RETURN[0] < 0.002
    if burst:
        out = x + y
        add_kernel[(1,)](x, y, out, 0, BLOCK_SIZE=1024)
    else:
        out = _launch(add_kernel_reading_x_twice, x, y)
    LAST_RETURN[0] = time.perf_counter()
    return out
