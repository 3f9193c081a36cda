"""
Exercise 1 · Vector add
=======================

In this exercise you will learn:

* how a Triton program finds its slice of the data (``tl.program_id`` and
  ``tl.arange``);
* why the last program needs a **mask**: ``n`` is rarely a multiple of the block;
* the **byte model** of a memory-bound kernel: ``out = x + y`` reads ``x`` and ``y`` and
  writes ``out`` once each, ``3 · n · element_size`` bytes.

Fill in the two places marked TODO, then run ``grade exercise 1``. The grader hands you
tensors that sit inside larger buffers full of NaN, so a load or store without a mask
shows up in its verdict. ``grade hint 1`` gives a hint when you are stuck.
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
    # TODO: compute this program's offsets (tl.program_id, tl.arange), build a mask so
    # the last program does not run past n_elements, load x and y, and store x + y into
    # out.
    pass


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Elementwise ``x + y`` for two 1-D tensors of the same shape and dtype."""
    out = torch.empty_like(x)
    n_elements = out.numel()
    # TODO: choose a grid that covers all n_elements with BLOCK_SIZE = 1024, launch
    # add_kernel on it, and delete the line below.
    raise NotImplementedError(
        "exercise 1: launch add_kernel from add() and write its body"
    )
    return out
