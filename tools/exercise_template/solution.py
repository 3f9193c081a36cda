"""
Exercise $number · $nav_title: the reference solution.
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
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def $function(x: torch.Tensor) -> torch.Tensor:
    """A copy of the 1-D tensor ``x``, written by a Triton kernel."""
    out = torch.empty_like(x)
    n_elements = out.numel()
    ${function}_kernel[(triton.cdiv(n_elements, BLOCK),)](x, out, n_elements, BLOCK=BLOCK)
    return out
