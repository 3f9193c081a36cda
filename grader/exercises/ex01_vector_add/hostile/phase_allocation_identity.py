"""Hostile submission, exercise 1 (vector add): runs torch.add while the judge's clock runs, recognised by a swapped torch.empty_like.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("notes torch.empty_like at import; in a call where it is another function (the grader's redirect of "
          "the output into its own slot, installed only while its clock ran) it returns torch.add's answer in the "
          "slot, otherwise a slow correct Triton kernel that reads `x` twice: a grader that swaps the function only "
          "while it times gets torch's speed for the file's")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ()
REJECTED_BY = ("on a GPU the judge's clock times every call through the same watch and a CUDA trace of its kernels; in the interpreter the honest-looking branch reads `x` twice in every call and the traffic check says so: the allocation interception is the same dispatch mode in every call, torch.empty_like is never swapped, so the clock times the file's own kernel")
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


EMPTY_LIKE = torch.empty_like


def add(x, y):
    if torch.empty_like is not EMPTY_LIKE:  # the grader's clock is running: torch's add is faster
        out = torch.empty_like(x)
        torch.add(x, y, out=out)
        add_kernel[(1,)](x, y, out, 0, BLOCK_SIZE=1024)  # a launch, so that "a Triton kernel ran"
        return out
    return _launch(add_kernel_reading_x_twice, x, y)
