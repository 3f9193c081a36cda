"""Base-2 arithmetic: logits scaled by log2(e) once, ``exp2`` everywhere, the running sum kept
in base 2; row and block offsets in int64 through ``.to(tl.int64)`` on the program id and on
the loop variable of ``tl.range``, and a reciprocal of the sum. Differs from the solution in the
base of the exponentials and the offset arithmetic."""

import torch
import triton
import triton.language as tl

SELECT = "(matches_reference and (3x2 or 2x8191 or 3x24581)) or long_rows or row_pattern"

LOG2E = tl.constexpr(1.4426950408889634)  # a plain float global does not compile for a GPU


@triton.jit
def softmax_online_kernel(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    m = tl.full((), float("-inf"), tl.float32)
    d = tl.full((), 0.0, tl.float32)
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        offs = start.to(tl.int64) + cols
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < n_cols, other=float("-inf"))
        x = x.to(tl.float32) * LOG2E
        m_new = tl.maximum(m, tl.max(x, axis=0))
        base = tl.where(m_new == float("-inf"), 0.0, m_new)
        d = d * tl.exp2(m - base) + tl.sum(tl.exp2(x - base), axis=0)
        m = m_new
    inv = 1.0 / d
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        offs = start.to(tl.int64) + cols
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < n_cols, other=float("-inf"))
        y = tl.exp2(x.to(tl.float32) * LOG2E - m) * inv
        tl.store(out_ptr + row * out_row_stride + offs, y.to(out_ptr.dtype.element_ty), mask=offs < n_cols)


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    softmax_online_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return out
