"""Wrong: the statistics are computed in the input's dtype (no `.to(tl.float32)` after the load).

In float16 the squares and their sum overflow past 65504: a row of 257 values of magnitude ~24
sums to about 1.5e5, so mean(x²) is inf, rstd = 0 and y = 0 on that row. (In bfloat16 nothing
overflows, but the sum keeps 8 significant bits: the error grows with the row.)
"""

import torch
import triton
import triton.language as tl

from solutions.ex09_rmsnorm import (backward_bytes, forward_bytes, forward_num_warps,  # noqa: F401
                                    partial_count, rmsnorm_backward)

EXPECTED = "the statistics look computed in float16"
SELECT = "forward_large_values and fp16"


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_row_stride, y_row_stride, n_cols, eps,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)  # WRONG: stays float16
    mean_square = tl.sum(x * x, axis=0) / n_cols  # a float16 sum: inf past 65504
    rstd = tl.rsqrt(mean_square.to(tl.float32) + eps)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * y_row_stride + cols, (x.to(tl.float32) * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_forward_kernel[(n_rows,)](x, weight, y, rstd, x.stride(0), y.stride(0), n_cols, eps, BLOCK=BLOCK,
                                      num_warps=forward_num_warps(BLOCK, x.element_size()))
    return y, rstd
