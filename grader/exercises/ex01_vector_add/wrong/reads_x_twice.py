"""Wrong (for speed): loads `x` a second time instead of reusing the register. The answer is
right; the bytes are not: the grader's traffic check counts 2 reads of `x`."""

import torch
import triton
import triton.language as tl

EXPECTED = "read `x` 2.00 times"
SELECT = "traffic"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    x_again = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, (x + y) * 0.5 + (x_again + y) * 0.5, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
