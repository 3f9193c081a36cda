"""Wrong (by this course's contract): a row that is entirely -inf is special-cased to zeros.

torch.softmax returns NaN for such a row (0 / 0), and so does a kernel that just subtracts the
row max; the course follows torch. Every other row is right.
"""

import torch
import triton
import triton.language as tl

EXPECTED = "follows torch.softmax, which returns NaN for such a row"
SELECT = "fully_masked_row"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)  # WRONG by the contract: an all -inf row becomes zeros
    num = tl.exp(x - m)
    s = tl.sum(num, axis=0)
    y = num / tl.where(s == 0.0, 1.0, s)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out
