"""Wrong: dweight, an output the backward returns, is made with `torch.zeros_like` before the kernels run.

A zeroed scratch buffer is allowed (natural/zeroed_partials.py); a returned output filled by torch is a
whole extra launch over it, and the message names that output, not another."""

import torch
import triton

from solutions.ex09_rmsnorm import (PROGRAMS_PER_SM, backward_bytes, backward_num_warps,  # noqa: F401
                                    dweight_reduce_kernel, forward_bytes, partial_count, reduce_tile,
                                    rmsnorm_backward_kernel, rmsnorm_forward, sm_count)

EXPECTED = "`dweight` was filled with torch before your kernel ran"
SELECT = "test_backward and 37x129 and fp32"


def rmsnorm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor):
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.zeros_like(weight)  # WRONG: an output; the reduction kernel writes every element
    num_sms = sm_count(x.device)
    n_partials = partial_count(n_rows, num_sms, PROGRAMS_PER_SM)
    partials = torch.empty((n_partials, n_cols), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_backward_kernel[(n_partials,)](
        dy, x, weight, rstd, dx, partials,
        dy.stride(0), x.stride(0), dx.stride(0), n_rows, n_cols, -(-n_rows // n_partials),
        BLOCK=BLOCK, num_warps=backward_num_warps(BLOCK, x.element_size()),
    )
    BLOCK_P, BLOCK_N = reduce_tile(n_cols, num_sms)
    dweight_reduce_kernel[(triton.cdiv(n_cols, BLOCK_N),)](
        partials, dweight, n_partials, n_cols, BLOCK_P=BLOCK_P, BLOCK_N=BLOCK_N,
    )
    return dx, dweight
