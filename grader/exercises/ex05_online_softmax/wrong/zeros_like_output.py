"""Wrong (for speed): the output is allocated with torch.zeros, a fill kernel that writes every
byte before the softmax kernel writes them again: a second launch and a fourth trip through memory."""

import torch
import triton
import triton.language as tl

EXPECTED = "filled with torch"
SELECT = "matches_reference and 3x781 and fp32"


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
        m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
        d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)
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
    out = torch.zeros((n_rows, n_cols), dtype=x.dtype, device=x.device)  # the mistake: a fill
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    softmax_online_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return out
