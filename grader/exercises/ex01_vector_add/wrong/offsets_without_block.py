"""Wrong: the offsets lack `* BLOCK_SIZE`, so every program starts at element `pid`.

The programs' blocks overlap, each one element past the last: between them they write the first
BLOCK_SIZE + programs - 1 elements (several times over) and leave the rest of `out` unwritten."""

import torch
import triton
import triton.language as tl

EXPECTED = "Every program starts at element `pid`, not `pid * BLOCK_SIZE`"
SELECT = "matches_reference and n4093 and fp32"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid + tl.arange(0, BLOCK_SIZE)  # WRONG: pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = out.numel()
    add_kernel[(triton.cdiv(n_elements, 1024),)](x, y, out, n_elements, BLOCK_SIZE=1024)
    return out
