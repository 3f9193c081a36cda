"""
Exercise $number · $nav_title
$underline

In this exercise you will learn what the exercise teaches.

Fill in the places marked TODO, then run ``grade exercise $number``; ``grade hint $number`` gives a hint.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def ${function}_kernel(
    x_ptr,  # pointer to the input
    out_ptr,  # pointer to the output
    n_elements,  # number of elements
    BLOCK: tl.constexpr,  # elements handled by one program (a power of two)
):
    # TODO: this program's offsets and mask, load x, store it into out.
    pass


def $function(x: torch.Tensor) -> torch.Tensor:
    """A copy of the 1-D tensor ``x``, written by a Triton kernel."""
    out = torch.empty_like(x)
    # TODO: launch ${function}_kernel on a grid that covers x, and delete the line below.
    raise NotImplementedError("exercise $number: launch ${function}_kernel from $function()")
    return out
