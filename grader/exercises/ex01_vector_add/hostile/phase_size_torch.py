"""Hostile submission, exercise 1 (vector add): computes with torch at the benchmark's size, far above every correctness size.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("recognises the timed calls by their input size (2**25 elements and more: the benchmark's sets; the largest correctness case is 2**24 + 3) and returns torch's x + y there, a Triton kernel that reads `x` twice otherwise")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ()
REJECTED_BY = ("on a GPU the learner's process keeps a CUDA trace over every counted round of the judge's clock, and "
               "torch's add kernel is not one of the file's Triton kernels (\"the GPU ran kernels that are not your "
               "file's Triton kernels\"); in the interpreter the honest-looking branch reads `x` twice in every call, "
               "and the traffic check says so")
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


BENCHMARK = 1 << 25


def add(x, y):
    if x.numel() >= BENCHMARK:
        out = x + y
        add_kernel[(1,)](x, y, out, 0, BLOCK_SIZE=1024)  # a launch, so that "a Triton kernel ran"
        return out
    return _launch(add_kernel_reading_x_twice, x, y)
