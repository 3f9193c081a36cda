"""Correct, and different from the solution: short rows are handled several to a program, in one
[ROWS, BLOCK] block (as Inductor's XBLOCK does), with 2-D masks and reductions along axis 1; rows
of 2048 columns or more keep one row per program."""

import torch
import triton
import triton.language as tl

MAX_ROW_BYTES = 128 * 1024


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_rows, n_cols,
                   BLOCK: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offsets = rows.to(tl.int64)[:, None]
    x = tl.load(x_ptr + offsets * x_row_stride + cols[None, :], mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(z)
    y = num / tl.sum(num, axis=1)[:, None]
    tl.store(out_ptr + offsets * out_row_stride + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    if n_cols * x.element_size() > MAX_ROW_BYTES:
        raise ValueError(f"rows of {n_cols} columns do not fit in one block")
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    ROWS = max(1, 2048 // BLOCK) if BLOCK < 2048 else 1
    num_warps = min(32, max(1, ROWS * BLOCK // 1024))
    softmax_kernel[(triton.cdiv(n_rows, ROWS),)](x, out, x.stride(0), out.stride(0), n_rows, n_cols,
                                                BLOCK=BLOCK, ROWS=ROWS, num_warps=num_warps)
    return out
