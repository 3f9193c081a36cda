"""Wrong (for speed): keeps the max in registers but reads the row a second time for the
output. Right answer, 1.50x the minimum bytes: the grader counts 2 reads of `x`."""

import torch
import triton
import triton.language as tl

EXPECTED = "read `x` 2.00 times"
SELECT = "traffic"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    row_max = tl.max(x, axis=0)
    denominator = tl.sum(tl.exp(x - row_max), axis=0)
    again = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    y = tl.exp(again - row_max) / denominator
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out
