"""Wrong: rows are addressed as row * n_cols, which is right only when the rows are contiguous.

For a column slice of a wider tensor (x.stride(0) > n_cols) rows 1, 2, ... are read from the
wrong place, partly from the gaps between rows. Contiguous inputs pass, so only the strided
check catches it.
"""

import torch
import triton
import triton.language as tl

EXPECTED = "ignores the row stride"
SELECT = "strided_rows and fp32"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)  # WRONG: n_cols
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * n_cols + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, n_cols, BLOCK=BLOCK)
    return out
