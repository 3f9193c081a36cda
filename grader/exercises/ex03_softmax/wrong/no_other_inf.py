"""Wrong: the row's load has a mask but no `other=-float("inf")`, so masked lanes load 0.

Each of the BLOCK - n_cols padding lanes then adds exp(0 - max) to the row sum, and every output
of the row comes out too small (for 781 columns in a 1024-wide block, about 16% too small).
"""

import torch
import triton
import triton.language as tl

EXPECTED = "masked lanes were loaded as 0, not -inf"
SELECT = "matches_reference and n781 and fp32"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask).to(tl.float32)  # WRONG: masked lanes are 0
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out
