"""Wrong: the grid rounds down (n // BLOCK), so the tail of `out` is never written."""

import torch
import triton
import triton.language as tl

EXPECTED = "unwritten"
SELECT = "matches_reference and n1025 and fp32"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK_SIZE=1024)
    return out
