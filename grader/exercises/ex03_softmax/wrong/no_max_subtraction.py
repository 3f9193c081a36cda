"""Wrong: exp(x) / sum(exp(x)) without subtracting the row max.

Mathematically the same softmax, and right for ordinary logits; but in float32 exp(x) is
infinite above x = 88.7, so rows with logits of magnitude 1e4 come out as NaN (inf / inf).
"""

import torch
import triton
import triton.language as tl

EXPECTED = "exp overflowed: subtract the row max first"
SELECT = "extreme_logits and fp32"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x)  # WRONG: no max subtraction
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out
