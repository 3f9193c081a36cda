"""Wrong: the sum is computed in bfloat16 (a cast inside the kernel), then stored as float32.

On float32 inputs every element is then a bfloat16 value, off by about 2^-9 of itself: within the
bfloat16 tolerance, far outside float32's."""

import torch
import triton
import triton.language as tl

EXPECTED = "your result has bfloat16's precision on float32 inputs"
SELECT = "matches_reference and n1025 and fp32"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.bfloat16)  # WRONG: the arithmetic belongs in float32
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.bfloat16)
    tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = out.numel()
    add_kernel[(triton.cdiv(n_elements, 1024),)](x, y, out, n_elements, BLOCK_SIZE=1024)
    return out
