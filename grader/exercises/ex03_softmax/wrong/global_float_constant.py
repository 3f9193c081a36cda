"""Wrong on a GPU: the kernel reads a module-level float, ``LOG2E = 1.4426950408889634``.

Triton's compiler only lets a kernel read globals that are ``tl.constexpr`` (or modules, jitted
functions, dtypes): this file does not compile for a GPU. Triton's interpreter would run it as
Python and pass it; the grader holds the interpreter to the compiler's rule, so the verdict is the
same on both machines. ``LOG2E = tl.constexpr(1.4426950408889634)`` compiles.
"""

import torch
import triton
import triton.language as tl

EXPECTED = "Cannot access global variable LOG2E from within @jit'ed function"
SELECT = "matches_reference and n781 and fp32"

LOG2E = 1.4426950408889634


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    p = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)
    y = p / tl.sum(p, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(x.shape[1])
    softmax_kernel[(x.shape[0],)](x, out, x.stride(0), out.stride(0), x.shape[1], BLOCK=BLOCK,
                                  num_warps=min(16, max(1, BLOCK // 1024)))
    return out
