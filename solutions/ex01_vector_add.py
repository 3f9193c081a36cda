"""
Exercise 1 · Vector add — reference solution
============================================

In this exercise you will learn:

* how a Triton program finds its slice of the data (``tl.program_id`` and
  ``tl.arange``);
* why the last program needs a **mask**: ``n`` is rarely a multiple of the block, and
  the interpreter will not stop an unmasked store from writing past the end of ``out``;
* the **byte model** of a memory-bound kernel: ``out = x + y`` must read ``x`` and ``y``
  and write ``out`` once each, ``3 · n · element_size`` bytes, and its time can never be
  less than those bytes over the memory bandwidth.

On an NVIDIA H200 this kernel reaches the measured ceiling at n = 2^28 fp32, the same as
``torch.add`` (docs/measurements/h200-ex01-vector-add.json,
rows[kernel=solution,n=268435456]): there is nothing left to gain.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(
    x_ptr,  # pointer to the first input vector
    y_ptr,  # pointer to the second input vector
    out_ptr,  # pointer to the output vector
    n_elements,  # number of elements in each vector
    BLOCK_SIZE: tl.constexpr,  # elements handled by one program (a power of two)
):
    # Program i handles elements [i * BLOCK_SIZE, (i + 1) * BLOCK_SIZE).
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    # The last program may run past n_elements: the mask switches those lanes off, for
    # the loads (no read past the end of x and y) and for the store (no write past the
    # end of out).
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    # Add in float32 and round once on the store. For one add this equals `x + y` in the
    # input dtype (a GPU rounds the bf16 sum once too); in longer expressions it keeps
    # float32 precision between the operations and rounds only once, at the end.
    total = x.to(tl.float32) + y.to(tl.float32)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Elementwise ``x + y`` for two 1-D tensors of the same shape and dtype."""
    # empty_like, not zeros_like: the kernel writes every element, a fill would be a
    # second launch.
    out = torch.empty_like(x)
    n_elements = out.numel()
    # One program per BLOCK_SIZE elements, rounded up so the tail is covered.
    grid = (triton.cdiv(n_elements, 1024),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=1024)
    return out
