"""Wrong: programs_per_sm counts registers and threads but not shared memory.

With the 2-stage pipeline each program keeps a row in shared memory: at 16384 fp32 columns that
is 64 KiB, so only 3 programs fit in an H200 SM's 227 KiB whatever the registers say.
"""

import torch
import triton

# Everything but programs_per_sm is the solution's (re-exported: the grader looks these names up here).
from solutions.ex04_softmax_persistent import (device_limits, grid_size, kernel_resources,
                                               softmax_persistent_kernel)

EXPECTED = 'the tightest limit wins, here shared memory'
SELECT = 'programs_per_sm and shared_memory'


def programs_per_sm(n_regs: int, shared_bytes: int, num_warps: int, *, regs_per_sm: int = 65536,
                    smem_per_sm: int = 232448, threads_per_sm: int = 2048, warp_size: int = 32) -> int:
    """How many programs of a compiled kernel fit on one SM at once: the tightest of the limits."""
    threads = warp_size * num_warps
    limits = [regs_per_sm // (n_regs * threads),  # registers
              threads_per_sm // threads]  # threads
    # the mistake: no `smem_per_sm // shared_bytes` limit when the kernel uses shared memory
    return min(limits)


def softmax_persistent(x: torch.Tensor) -> torch.Tensor:
    """The solution's launcher (less its argument checks): here it calls the programs_per_sm above."""
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
