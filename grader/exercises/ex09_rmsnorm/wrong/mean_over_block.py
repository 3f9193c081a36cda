"""Wrong: the masked lanes count in the mean: the sum of squares is divided by BLOCK, not n_cols.

The masked lanes load 0, so the sum itself is right; but a 129-column row in a 256-wide block is
divided by 256, and rstd comes out sqrt(256 / 129) = 1.41 times too large.
"""

import torch
import triton
import triton.language as tl

from solutions.ex09_rmsnorm import (backward_bytes, forward_bytes, forward_num_warps,  # noqa: F401
                                    partial_count, rmsnorm_backward)

EXPECTED = "divided by the block width 256, not by N = 129"
SELECT = "test_forward and 7x129 and fp32"


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_row_stride, y_row_stride, n_cols, eps,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / BLOCK + eps)  # WRONG: the row has n_cols elements
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * y_row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_forward_kernel[(n_rows,)](x, weight, y, rstd, x.stride(0), y.stride(0), n_cols, eps, BLOCK=BLOCK,
                                      num_warps=forward_num_warps(BLOCK, x.element_size()))
    return y, rstd
