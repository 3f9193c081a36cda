"""Wrong: the kernel is launched (a copy) but the answer is computed with torch."""

import torch
import triton
import triton.language as tl

EXPECTED = "computed with torch"
SELECT = "matches_reference and n1025 and fp32"


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def add(x, y):
    total = x + y
    out = torch.empty_like(x)
    n = out.numel()
    copy_kernel[(triton.cdiv(n, 1024),)](total, out, n, BLOCK_SIZE=1024)
    return out
