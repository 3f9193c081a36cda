"""Running statistics per lane: a vector of BLOCK_SIZE running maxima and sums, updated element
by element without any reduction inside the loop, merged into one max and one sum after it.
Differs from the solution, which reduces each block to a scalar max and sum."""

import torch
import triton
import triton.language as tl

SELECT = ("(matches_reference and (1x1 or 3x781 or 3x8193)) or row_pattern or strided_rows or traffic")


@triton.jit
def softmax_online_kernel(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    m = tl.full([BLOCK_SIZE], float("-inf"), tl.float32)
    d = tl.zeros([BLOCK_SIZE], tl.float32)
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # A lane that has seen only -inf keeps d = 0 (no -inf - -inf).
        ref = tl.where(m_new == float("-inf"), 0.0, m_new)
        d = d * tl.exp(m - ref) + tl.exp(x - ref)
        m = m_new
    m_row = tl.max(m, axis=0)
    ref_row = tl.where(m_row == float("-inf"), 0.0, m_row)
    d_row = tl.sum(tl.where(m == float("-inf"), 0.0, d * tl.exp(m - ref_row)), axis=0)
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m_row) / d_row
        tl.store(out_ptr + row * out_row_stride + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    softmax_online_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                     num_warps=8)
    return out
