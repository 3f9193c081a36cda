"""
Exercise $number · $nav_title
$underline
#stub:
#stub: In this exercise you will learn what the exercise teaches.
#stub:
#stub: Fill in the places marked TODO, then run ``grade exercise $number``;
#stub: ``grade hint $number`` gives a hint.
#solution:
#solution: The reference solution: one program per block of BLOCK elements, a masked
#solution: load and store.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def ${function}_kernel(
    x_ptr,  # pointer to the input
    out_ptr,  # pointer to the output
    n_elements,  # number of elements
    BLOCK: tl.constexpr,  # elements handled by one program (a power of two)
):
    #stub: # TODO: this program's offsets and mask, load x, store it into out.
    #stub: pass
    #solution: offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    #solution: mask = offsets < n_elements
    #solution: x = tl.load(x_ptr + offsets, mask=mask)
    #solution: tl.store(out_ptr + offsets, x, mask=mask)


def $function(x: torch.Tensor) -> torch.Tensor:
    """A copy of the 1-D tensor ``x``, written by a Triton kernel."""
    out = torch.empty_like(x)
    n_elements = out.numel()
    #stub: # TODO: launch ${function}_kernel on a grid of triton.cdiv(n_elements, BLOCK)
    #stub: # programs, and delete the line below.
    #stub: raise NotImplementedError(
    #stub:     "exercise $number: launch ${function}_kernel from $function()"
    #stub: )
    #solution: grid = (triton.cdiv(n_elements, BLOCK),)
    #solution: ${function}_kernel[grid](x, out, n_elements, BLOCK=BLOCK)
    return out
