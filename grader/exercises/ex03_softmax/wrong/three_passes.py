"""Wrong (for speed): the "textbook" three-pass softmax in one kernel: read the row to find the
max, read it again for the sum of exponentials, read it a third time to write the output. The
answer is right; the bytes are not. In the interpreter the grader counts 3 reads of `x` where a
fused softmax needs 1: 2.00x the minimum bytes."""

import torch
import triton
import triton.language as tl

EXPECTED = "read `x` 3.00 times"
SELECT = "traffic"


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # pass 1: the max
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    row_max = tl.max(x, axis=0)
    # pass 2: the sum (reads the row again instead of keeping it in registers)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    denominator = tl.sum(tl.exp(x - row_max), axis=0)
    # pass 3: the output
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    y = tl.exp(x - row_max) / denominator
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=BLOCK)
    return out
