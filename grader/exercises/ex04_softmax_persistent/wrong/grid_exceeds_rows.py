"""Wrong: grid_size forgets the rows: it always fills every SM, even for 3 rows.

The loop bounds keep the extra programs idle, so the answer is right; the grid is not.
"""

import torch
import triton

# Everything but grid_size is the solution's (re-exported: the grader looks these names up here).
from solutions.ex04_softmax_persistent import (device_limits, kernel_resources, programs_per_sm,
                                               softmax_persistent_kernel)

EXPECTED = 'never launch more programs than rows'
SELECT = 'grid and few_rows'


def grid_size(n_rows: int, programs_per_sm: int, num_sms: int) -> int:
    """Programs to launch: every SM filled to its occupancy."""
    return programs_per_sm * num_sms  # the mistake: no min(n_rows, ...), so more programs than rows


def softmax_persistent(x: torch.Tensor) -> torch.Tensor:
    """The solution's launcher (less its argument checks): here it calls the grid_size above."""
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    meta = dict(BLOCK=BLOCK, NUM_STAGES=2, num_warps=min(16, max(4, BLOCK // 512)))
    args = (x, out, x.stride(0), out.stride(0), n_rows, n_cols)
    res = kernel_resources(softmax_persistent_kernel, *args, **meta)
    gpu = device_limits(x.device)
    per_sm = programs_per_sm(res["n_regs"], res["shared_bytes"], res["num_warps"],
                             regs_per_sm=gpu["regs_per_sm"], smem_per_sm=gpu["smem_per_sm"],
                             threads_per_sm=gpu["threads_per_sm"], warp_size=gpu["warp_size"])
    grid = (grid_size(n_rows, per_sm, gpu["num_sms"]),)
    softmax_persistent_kernel[grid](*args, **meta)
    return out
