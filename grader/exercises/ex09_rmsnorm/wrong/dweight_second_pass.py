"""Wrong (for speed): dweight gets its own kernel, which reads x, dy and rstd a second time (one
program per block of columns, summing down the rows): the schedule you get when the row reduction
(for dx) and the column reduction (for dweight) are written as two separate reductions.
Right answer; the backward moves 5·M·N elements where 3·M·N suffice, since each row of dy · x̂ can
be added to a running sum while the row is in registers for dx."""

import torch
import triton
import triton.language as tl

from solutions.ex09_rmsnorm import (backward_bytes, backward_num_warps, forward_bytes,  # noqa: F401
                                    partial_count, rmsnorm_forward)

EXPECTED = "your kernel read `x` 2.00 times"
SELECT = "backward_traffic"


@triton.jit
def dx_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dy_row_stride, x_row_stride, dx_row_stride, n_cols,
              BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.load(rstd_ptr + row)
    x_hat = x * rstd
    g = dy * w
    c = tl.sum(x_hat * g, axis=0) / n_cols
    tl.store(dx_ptr + row * dx_row_stride + cols, ((g - x_hat * c) * rstd).to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def dweight_kernel(dy_ptr, x_ptr, rstd_ptr, dw_ptr, dy_row_stride, x_row_stride, n_rows, n_cols,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_M):  # WRONG (for speed): x and dy read again
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows < n_rows)[:, None] & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + rows[:, None] * dy_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + rows, mask=rows < n_rows, other=0.0)
        acc += dy * x * rstd[:, None]
    tl.store(dw_ptr + cols, tl.sum(acc, axis=0).to(dw_ptr.dtype.element_ty), mask=col_mask)


def rmsnorm_backward(dy, x, weight, rstd):
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    BLOCK = triton.next_power_of_2(n_cols)
    dx_kernel[(n_rows,)](dy, x, weight, rstd, dx, dy.stride(0), x.stride(0), dx.stride(0), n_cols, BLOCK=BLOCK,
                         num_warps=backward_num_warps(BLOCK, x.element_size()))
    dweight_kernel[(triton.cdiv(n_cols, 64),)](dy, x, rstd, dweight, dy.stride(0), x.stride(0), n_rows, n_cols,
                                               BLOCK_M=32, BLOCK_N=64)
    return dx, dweight
