"""Blocks of 4096 elements with 8 warps, int64 program offsets, masked loads that fill with
``other=0.0``, and the sum taken in float32 then cast to the output's element type by name
(``tl.bfloat16`` style: ``out_ptr.dtype.element_ty``). Differs from the solution in block size,
warps and the offset arithmetic."""

import torch
import triton
import triton.language as tl

SELECT = "(matches_reference and (n2 or n127 or n4093)) or traffic"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * BLOCK
    idx = base + tl.arange(0, BLOCK)
    in_bounds = idx < n
    x = tl.load(x_ptr + idx, mask=in_bounds, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + idx, mask=in_bounds, other=0.0).to(tl.float32)
    tl.store(out_ptr + idx, (x + y).to(out_ptr.dtype.element_ty), mask=in_bounds)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 4096),)](x, y, out, n, BLOCK=4096, num_warps=8)
    return out
