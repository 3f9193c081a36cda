"""``exp2`` with the log2(e) factor instead of ``exp``, and one reciprocal of the sum per row
multiplied into every element instead of a division per element. Differs from the solution in
those two lines."""

import torch
import triton
import triton.language as tl

SELECT = ("(matches_reference and (n3 or n781 or n4097)) or extreme_logits or masked_logits or fully_masked_row "
          "or longest_row")

LOG2E = tl.constexpr(1.4426950408889634)  # a plain float global does not compile for a GPU


@triton.jit
def softmax_kernel(x_ptr, out_ptr, stride_x, stride_out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
    p = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)
    inv = 1.0 / tl.sum(p, axis=0)
    tl.store(out_ptr + row * stride_out + offs, (p * inv).to(out_ptr.dtype.element_ty), mask=offs < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    block = triton.next_power_of_2(x.shape[1])
    softmax_kernel[(x.shape[0],)](x, out, x.stride(0), out.stride(0), x.shape[1], BLOCK=block,
                                  num_warps=min(16, max(1, block // 1024)))
    return out
