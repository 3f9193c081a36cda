"""Wrong: the launcher refuses rows over 32768 columns whatever the dtype. The limit is in bytes
(128 KiB per row): a float16 or bfloat16 row of 65536 columns fits in one block too."""

import torch
import triton
import triton.language as tl

EXPECTED = "holds rows of up to 128 KiB in one block"
SELECT = "longest_row and bf16"

MAX_COLS = 32768  # WRONG: 32768 float32 columns are 128 KiB, but 65536 bfloat16 columns are too


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_rows, n_cols = x.shape
    if n_cols > MAX_COLS:
        raise ValueError(f"rows of {n_cols} columns do not fit in one block (at most {MAX_COLS})")
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK,
                              num_warps=min(32, max(1, BLOCK // 1024)))
    return out
