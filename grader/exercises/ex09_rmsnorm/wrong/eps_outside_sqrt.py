"""Wrong: eps is added after the square root, rstd = 1 / (sqrt(mean(x²)) + eps).

On ordinary rows the two agree to a millionth; on a row whose mean of squares is as small as eps
(a padding row of zeros, rows of tiny activations) they do not: for a row of zeros the right rstd
is 1 / sqrt(eps) = 316 (eps = 1e-5), this one 1 / eps = 100000.
"""

import torch
import triton
import triton.language as tl

# Everything but the forward is the solution's (re-exported: the grader looks these names up here).
from solutions.ex09_rmsnorm import (backward_bytes, forward_bytes, forward_num_warps,  # noqa: F401
                                    partial_count, rmsnorm_backward)

EXPECTED = "eps is added outside the square root"
SELECT = "forward_eps and fp32"


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_row_stride, y_row_stride, n_cols, eps,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    rstd = 1.0 / (rms + eps)  # WRONG: eps belongs inside the square root
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
