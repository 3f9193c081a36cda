"""Wrong: the output is allocated with zeros_like, a whole extra kernel launch writing every byte.

The answer is right, and the fill costs a full write of `out` before the kernel writes it again:
removing it looks like a speedup that no kernel change earned.
"""

import torch
import triton
import triton.language as tl

EXPECTED = "filled with torch before your kernel ran"
SELECT = "matches_reference and n781 and fp32"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.zeros_like(x)  # WRONG: an extra launch; the kernel writes every element anyway
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out
