"""Wrong: no mask on the loads or the store. The last program writes past the end of `out`."""

import torch
import triton
import triton.language as tl

EXPECTED = "past the end of `out`"
SELECT = "matches_reference and n1025 and fp32"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
