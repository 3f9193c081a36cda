"""Wrong: no guard for a block of only -inf. While the running max is still -inf,
exp(m - m_new) = exp(-inf - (-inf)) is NaN, and NaN * 0 is NaN: a row that starts with a masked
block (as in causal attention) comes out all NaN."""

import torch
import triton
import triton.language as tl

EXPECTED = "a block whose entries are all -inf gave NaN"
SELECT = "leading_inf and fp32"


@triton.jit
def softmax_online_kernel(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    m = tl.full((), float("-inf"), tl.float32)
    d = tl.full((), 0.0, tl.float32)
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)  # the mistake: no -inf guard
        m = m_new
        start += BLOCK_SIZE
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(out_row + start + cols, (tl.exp(x - m) / d).to(out_ptr.dtype.element_ty), mask=mask)
        start += BLOCK_SIZE


def softmax_online(x):
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    softmax_online_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return out
