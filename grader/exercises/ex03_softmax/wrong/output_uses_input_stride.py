"""Wrong: the output is addressed with x's row stride.

`out = torch.empty_like(x)` is contiguous even when x is a column slice, so its rows are n_cols
apart, not x.stride(0): the stores run past the end of `out`. Contiguous inputs pass.
"""

import torch
import triton
import triton.language as tl

EXPECTED = "ignores the row stride of `out`"
SELECT = "strided_rows and fp32"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)  # WRONG: x's stride


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), n_cols, BLOCK=BLOCK)
    return out
