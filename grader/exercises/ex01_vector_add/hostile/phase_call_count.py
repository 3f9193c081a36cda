"""Hostile submission, exercise 1 (vector add): computes with torch from its 36th call on: after every correctness call of a whole run.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("counts its calls: a whole `grade exercise 1` makes 35 correctness and traffic calls before the timed ones, so from the 36th call on it returns torch's x + y, before that a Triton kernel that reads `x` twice")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ()
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


CALLS = [0]


def add(x, y):
    CALLS[0] += 1
    if CALLS[0] > 35:
        out = x + y
        add_kernel[(1,)](x, y, out, 0, BLOCK_SIZE=1024)
        return out
    return _launch(add_kernel_reading_x_twice, x, y)
