"""Wrong (for speed): the backward runs one program per row, so the partial buffer has M rows of
N float32: at 16384 x 4096 bf16 that is 268 MB written and read back, as much as x itself, for a
reduction that needs only enough programs to fill the GPU (a few hundred rows of partials)."""

import torch
import triton
import triton.language as tl

from solutions.ex09_rmsnorm import (backward_bytes, backward_num_warps, dweight_reduce_kernel,  # noqa: F401
                                    forward_bytes, partial_count, reduce_tile, rmsnorm_forward, sm_count)

EXPECTED = "your backward launched one program per row"
SELECT = "backward_grid and many_rows"


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, partial_ptr, dy_row_stride, x_row_stride,
                            dx_row_stride, n_cols, BLOCK: tl.constexpr):
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
    tl.store(partial_ptr + row * n_cols + cols, dy * x_hat, mask=mask)  # one partial row per row of x


def rmsnorm_backward(dy, x, weight, rstd):
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    partials = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)  # WRONG: M rows
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_backward_kernel[(n_rows,)](dy, x, weight, rstd, dx, partials, dy.stride(0), x.stride(0), dx.stride(0),
                                       n_cols, BLOCK=BLOCK, num_warps=backward_num_warps(BLOCK, x.element_size()))
    BLOCK_P, BLOCK_N = reduce_tile(n_cols, sm_count(x.device))
    dweight_reduce_kernel[(triton.cdiv(n_cols, BLOCK_N),)](partials, dweight, n_rows, n_cols,
                                                          BLOCK_P=BLOCK_P, BLOCK_N=BLOCK_N)
    return dx, dweight
