"""Wrong: the masked lanes are guarded in the exponent instead of zeroed before the sum.

The load is right (`other=-inf`), but the learner, worried about `-inf - (-inf) = NaN`, replaced
the masked lanes' exponent by 0: `z = tl.where(mask, x - m, 0.0)`. Then exp(z) = exp(0) = 1 on
every masked lane, and the sum counts each of them once. The exponentials must be zeroed, not
their exponents: `e = tl.where(mask, tl.exp(x - m), 0.0)`.
"""

import torch
import triton
import triton.language as tl

EXPECTED = "masked lanes were not zeroed before the sum"
SELECT = "matches_reference and n781 and fp32"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    z = tl.where(mask, x - m, 0.0)  # WRONG: masked lanes get exp(0) = 1 in the sum
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out
