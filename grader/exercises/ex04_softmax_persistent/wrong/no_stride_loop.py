"""Wrong: the persistent kernel has no row loop: program pid normalizes row pid and stops.

The grid is the occupancy grid, so when there are more rows than programs, only the first
`grid` rows of `out` are written.
"""

import torch
import triton
import triton.language as tl

# Everything but the kernel is the solution's (re-exported: the grader looks these names up here).
from solutions.ex04_softmax_persistent import device_limits, grid_size, kernel_resources, programs_per_sm

EXPECTED = 'the kernel ignores the stride loop'
SELECT = 'matches_reference and n781 and fp32'


@triton.jit
def softmax_persistent_kernel(
    x_ptr,  # pointer to x[0, 0]
    out_ptr,  # pointer to out[0, 0]
    x_row_stride,  # elements from the start of one row of x to the start of the next: x.stride(0)
    out_row_stride,  # the same for out: out.stride(0)
    n_rows,  # M: rows to normalize, shared among the programs of the grid
    n_cols,  # N: elements in each row
    BLOCK: tl.constexpr,  # a power of two >= n_cols: the whole row is one block
    NUM_STAGES: tl.constexpr,  # rows in flight in the row loop (unused: there is no loop)
):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # the mistake: one row per program, as in exercise 3, with no loop over rows
    # pid + G, pid + 2G, ... (the grid below has fewer programs than rows)
    row = tl.program_id(0).to(tl.int64)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    numerator = tl.exp(z)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_persistent(x: torch.Tensor) -> torch.Tensor:
    """The solution's launcher (less its argument checks): here it launches the kernel above."""
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
