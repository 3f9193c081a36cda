"""``LOG2E = tl.constexpr(math.log2(math.e))``, computed at module level with ``math``, and
``exp2`` in the kernel; the launcher picks the block and the warps in a local helper with type
hints and refuses what it does not take with an f-string. Differs from the solution in the exp2
and in how the launcher is split into helpers."""

import math

import torch
import triton
import triton.language as tl

SELECT = "(matches_reference and (n1 or n3 or n781)) or strided_rows or masked_logits or fully_masked_row"

LOG2E = tl.constexpr(math.log2(math.e))  # a plain float global would not compile for a GPU


@triton.jit
def softmax_kernel(x_ptr, out_ptr, stride_x, stride_out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
    p = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)
    tl.store(out_ptr + row * stride_out + offs, (p / tl.sum(p, axis=0)).to(out_ptr.dtype.element_ty),
             mask=offs < n_cols)


def _launch_shape(n_cols: int) -> tuple[int, int]:
    """(block, warps): one block holds a whole row."""
    block = triton.next_power_of_2(n_cols)
    return block, min(16, max(1, block // 1024))


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.dim() != 2:
        raise ValueError(f"softmax takes a 2-D tensor, not {x.dim()}-D {tuple(x.shape)}")
    out = torch.empty_like(x)
    block, warps = _launch_shape(x.shape[1])
    softmax_kernel[(x.shape[0],)](x, out, x.stride(0), out.stride(0), x.shape[1], BLOCK=block, num_warps=warps)
    return out
