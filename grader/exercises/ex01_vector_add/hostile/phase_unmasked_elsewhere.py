"""Hostile submission, exercise 1 (vector add): loads without a mask at every size but the traffic check's; the store keeps its mask.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("recognises the traffic check by its input size and masks its loads only there; elsewhere the loads of the last block run past the end of `x` and `y` (into the grader's guards), and only the masked store keeps the answer right")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ()
REJECTED_BY = ("every correctness call's bytes are counted in the interpreter, and bytes outside every tensor fail any of them, not only the traffic check's")
#: What `grade exercise 1` says in the interpreter (a substring), on the checks SELECT picks.
EXPECTED = 'outside every tensor'
SELECT = 'matches_reference and n1025 and fp32'


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


@triton.jit
def add_kernel_unmasked_loads(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)  # past the end in the last block: what lies there is never stored
    y = tl.load(y_ptr + offsets)
    total = (x.to(tl.float32) + y.to(tl.float32)).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offsets, total, mask=offsets < n_elements)


def add(x, y):
    if x.numel() == TRAFFIC_SIZE:
        return _launch(add_kernel, x, y)
    return _launch(add_kernel_unmasked_loads, x, y)
