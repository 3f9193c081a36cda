"""Wrong: the kernel loops over rows correctly, but the launcher launches one program per row.

The answer is right (each program's loop runs once): the grid check sees exercise 3's grid.
"""

import torch
import triton

# Everything but the launcher is the solution's (re-exported: the grader looks these names up here).
from solutions.ex04_softmax_persistent import (  # noqa: F401
    device_limits, grid_size, kernel_resources, programs_per_sm, softmax_persistent_kernel)

EXPECTED = 'launched one program per row'
SELECT = 'grid and many_rows'


def softmax_persistent(x: torch.Tensor) -> torch.Tensor:
    """The solution's launcher (less its argument checks), with the wrong grid."""
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    # the mistake: exercise 3's grid, one program per row, instead of
    # grid_size(n_rows, programs_per_sm(<the compiled kernel's counts>, <the GPU's limits>), num_sms)
    grid = (n_rows,)
    softmax_persistent_kernel[grid](x, out, x.stride(0), out.stride(0), n_rows, n_cols,
                                    BLOCK=BLOCK, NUM_STAGES=2, num_warps=min(16, max(4, BLOCK // 512)))
    return out
