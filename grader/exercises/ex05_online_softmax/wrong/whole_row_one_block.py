"""Wrong: exercise 3's kernel, one block as long as the row (BLOCK_SIZE = next_power_of_2(n_cols)).
Correct in the interpreter, but not the exercise: a row of 2^20 + 3 columns would need a block
of 2^21, past Triton's limit of 2^20 elements per tensor and far past one program's registers."""

import torch
import triton
import triton.language as tl

EXPECTED = "each row was read as one block"
SELECT = "long_rows and fp32"


@triton.jit
def softmax_online_kernel(out_ptr, x_ptr, x_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_online(x):
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)  # the mistake: the whole row in one block
    softmax_online_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return out
