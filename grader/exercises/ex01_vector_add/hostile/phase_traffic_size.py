"""Hostile submission, exercise 1 (vector add): reads `x` twice at every size but the traffic check's (3 * 1024 + 7 elements).

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import torch
import triton
import triton.language as tl

ATTACK = ('recognises the traffic check by its input size (3 * 1024 + 7, a size no other check uses) and reads `x` once there, twice everywhere else')
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ()
REJECTED_BY = ("the traffic check's rules hold on every call of the run, on tensors at least as large as its own: "
               "the calls at larger sizes read `x` twice")
#: What `grade exercise 1` says in the interpreter (a substring), on the checks SELECT picks.
EXPECTED = 'read `x` 2.00 times on inputs of shape'
SELECT = 'traffic or (matches_reference and n4093 and fp32)'


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


TRAFFIC_SIZE = 3 * 1024 + 7


def add(x, y):
    if x.numel() == TRAFFIC_SIZE:
        return _launch(add_kernel, x, y)
    return _launch(add_kernel_reading_x_twice, x, y)
