"""Wrong (for speed): an online softmax that spends a separate pass on the max before the sum
pass (the very pass the online rescaling exists to save): 3 reads of `x` where the algorithm
needs 2. Right answer; the traffic check counts the reads."""

import torch
import triton
import triton.language as tl

EXPECTED = "read `x` 3.00 times"
SELECT = "traffic"


@triton.jit
def softmax_online_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    offs = tl.arange(0, BLOCK_SIZE)
    m = tl.full((BLOCK_SIZE,), -float("inf"), tl.float32)
    start = 0
    while start < n_cols:  # pass 1: the max only
        x = tl.load(x_row + start + offs, mask=start + offs < n_cols, other=-float("inf")).to(tl.float32)
        m = tl.maximum(m, x)
        start += BLOCK_SIZE
    row_max = tl.max(m, axis=0)
    d = tl.zeros((BLOCK_SIZE,), tl.float32)
    start = 0
    while start < n_cols:  # pass 2: the sum
        x = tl.load(x_row + start + offs, mask=start + offs < n_cols, other=-float("inf")).to(tl.float32)
        d += tl.exp(x - row_max)
        start += BLOCK_SIZE
    denominator = tl.sum(d, axis=0)
    start = 0
    while start < n_cols:  # pass 3: normalize
        mask = start + offs < n_cols
        x = tl.load(x_row + start + offs, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / denominator
        tl.store(out_ptr + row * out_row_stride + start + offs, y.to(out_ptr.dtype.element_ty), mask=mask)
        start += BLOCK_SIZE


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    softmax_online_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return out
