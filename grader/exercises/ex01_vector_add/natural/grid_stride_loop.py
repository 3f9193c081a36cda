"""A grid of at most 1024 programs, each walking the vector with a grid-stride loop over
``tl.range``; the loop variable is turned into int64 with ``.to(tl.int64)`` before it becomes
an offset. Differs from the solution (one program per block, no loop)."""

import torch
import triton
import triton.language as tl

SELECT = "(matches_reference and (n1 or n129 or n1025 or n65537)) or traffic or large"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    step = tl.num_programs(0) * BLOCK_SIZE
    for start in tl.range(tl.program_id(0) * BLOCK_SIZE, n_elements, step):
        offsets = start.to(tl.int64) + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        a = tl.load(x_ptr + offsets, mask=mask)
        b = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, a + b, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK_SIZE = 512
    grid = (min(1024, triton.cdiv(n, BLOCK_SIZE)),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out
