"""Wrong: the backward ignores the rstd it is given and recomputes it from the 16-bit x, in the
input's dtype, with an eps it had to guess (1e-6).

The forward saved rstd in float32 for exactly this: recomputing costs a second reduction per row,
rounds the statistics to 16 bits, and cannot know the forward's eps (here the grader's forward
used eps = 0.1, on rows where that matters).
"""

import torch
import triton
import triton.language as tl

from solutions.ex09_rmsnorm import (PROGRAMS_PER_SM, backward_bytes, backward_num_warps,  # noqa: F401
                                    dweight_reduce_kernel, forward_bytes, partial_count, reduce_tile,
                                    rmsnorm_forward, sm_count)

EXPECTED = "your backward does not use the rstd it was given"
SELECT = "backward_uses_given_rstd and fp16"


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, partial_ptr, dy_row_stride, x_row_stride,
                            dx_row_stride, n_rows, n_cols, rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    row_start = pid.to(tl.int64) * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    for row in tl.range(row_start, row_end):
        x16 = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        # WRONG: recomputed in 16 bits with a guessed eps, instead of tl.load(rstd_ptr + row)
        rstd = tl.rsqrt((tl.sum(x16 * x16, axis=0) / n_cols).to(tl.float32) + 1e-6)
        x_hat = x16.to(tl.float32) * rstd
        g = dy * w
        c = tl.sum(x_hat * g, axis=0) / n_cols
        tl.store(dx_ptr + row * dx_row_stride + cols, ((g - x_hat * c) * rstd).to(dx_ptr.dtype.element_ty),
                 mask=mask)
        dw += dy * x_hat
    tl.store(partial_ptr + pid.to(tl.int64) * n_cols + cols, dw, mask=mask)


def rmsnorm_backward(dy, x, weight, rstd):
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    num_sms = sm_count(x.device)
    n_partials = partial_count(n_rows, num_sms, PROGRAMS_PER_SM)
    partials = torch.empty((n_partials, n_cols), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_backward_kernel[(n_partials,)](dy, x, weight, rstd, dx, partials, dy.stride(0), x.stride(0),
                                           dx.stride(0), n_rows, n_cols, triton.cdiv(n_rows, n_partials),
                                           BLOCK=BLOCK, num_warps=backward_num_warps(BLOCK, x.element_size()))
    BLOCK_P, BLOCK_N = reduce_tile(n_cols, num_sms)
    dweight_reduce_kernel[(triton.cdiv(n_cols, BLOCK_N),)](partials, dweight, n_partials, n_cols,
                                                          BLOCK_P=BLOCK_P, BLOCK_N=BLOCK_N)
    return dx, dweight
