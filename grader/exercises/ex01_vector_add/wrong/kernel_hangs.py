"""Wrong: a loop whose condition never changes; the grader's per-check timeout must end it."""

import torch
import triton
import triton.language as tl

EXPECTED = "did not finish within"
SELECT = "matches_reference and n3 and fp32"
TIMEOUT = 8


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    i = 0
    while i < n_elements:  # i is never incremented
        x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
