"""The textbook online softmax with ``for start in range(0, n_cols, BLOCK_SIZE)`` loops (the
loop the solution writes as a ``while``), scalar running max and sum, and a division per
element in the second pass. Differs from the solution in the loops and the final division."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    m = float("-inf")
    d = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        d = d * tl.exp(m - safe) + tl.sum(tl.exp(x - safe), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(out_row + start + cols, (tl.exp(x - m) / d).to(out_ptr.dtype.element_ty), mask=mask)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    softmax_online_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                     num_warps=16 if BLOCK_SIZE >= 8192 else 4)
    return out
