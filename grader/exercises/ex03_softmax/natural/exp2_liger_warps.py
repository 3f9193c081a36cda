"""Correct, and different from the solution: the exponential as exp2 of x * log2(e) (what tl.exp
compiles to anyway), the row limit checked in bytes with element_size(), and warps from fixed
thresholds in the manner of Liger-Kernel's calculate_settings (4 up to 2048 columns, 8, 16, then 32
from 32768 columns)."""

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # a plain float global does not compile for a GPU


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    num = tl.exp2((x - m) * LOG2E)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    if n_cols * x.element_size() > 128 * 1024:
        raise ValueError("a row longer than 128 KiB does not fit in one block")
    BLOCK = triton.next_power_of_2(n_cols)
    num_warps = 32 if BLOCK >= 32768 else 16 if BLOCK >= 8192 else 8 if BLOCK >= 2048 else 4
    out = torch.empty_like(x)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK, num_warps=num_warps)
    return out
