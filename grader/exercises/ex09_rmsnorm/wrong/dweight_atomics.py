"""Wrong (for training): dweight is accumulated with tl.atomic_add into a zeroed float32 buffer,
as Triton's layer-norm tutorial does with a lock. Each program adds its running sum when it
finishes; programs finish in an order that changes from run to run, and float32 addition is not
associative, so dweight changes in its last bits between two runs on the same input. (The answer
is right, and in Triton's interpreter, which runs programs one at a time, it is even reproducible:
the traffic counter sees the atomics.)
"""

import torch
import triton
import triton.language as tl

from solutions.ex09_rmsnorm import (PROGRAMS_PER_SM, backward_bytes, backward_num_warps,  # noqa: F401
                                    forward_bytes, partial_count, rmsnorm_forward, sm_count)

EXPECTED = "your backward adds with atomics"
SELECT = "dweight_deterministic"


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_ptr, dy_row_stride, x_row_stride,
                            dx_row_stride, n_rows, n_cols, rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    row_start = pid.to(tl.int64) * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    for row in tl.range(row_start, row_end):
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        x_hat = x * rstd
        g = dy * w
        c = tl.sum(x_hat * g, axis=0) / n_cols
        tl.store(dx_ptr + row * dx_row_stride + cols, ((g - x_hat * c) * rstd).to(dx_ptr.dtype.element_ty),
                 mask=mask)
        dw += dy * x_hat
    tl.atomic_add(dw_ptr + cols, dw, mask=mask)  # WRONG: the order of the adds is the hardware's


def rmsnorm_backward(dy, x, weight, rstd):
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.zeros_like(weight)  # float32 weights in the check that sees this
    n_programs = partial_count(n_rows, sm_count(x.device), PROGRAMS_PER_SM)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_backward_kernel[(n_programs,)](dy, x, weight, rstd, dx, dweight, dy.stride(0), x.stride(0),
                                           dx.stride(0), n_rows, n_cols, triton.cdiv(n_rows, n_programs),
                                           BLOCK=BLOCK, num_warps=backward_num_warps(BLOCK, x.element_size()))
    return dx, dweight
