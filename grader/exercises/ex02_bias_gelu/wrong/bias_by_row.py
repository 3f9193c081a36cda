"""Wrong: the bias is indexed by the row (bias[r]) instead of the column (bias[c])."""

import torch
import triton
import triton.language as tl

EXPECTED = "indexed by the row instead of the column"
SELECT = "bias_broadcast and 5x64"


@triton.jit
def bias_gelu_kernel(x_ptr, bias_ptr, out_ptr, M, N, x_row_stride, out_row_stride,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    b = tl.load(bias_ptr + rows, mask=rows < M).to(tl.float32)  # WRONG: one bias per row
    x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask).to(tl.float32)
    z = x + b[:, None]
    out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))
    tl.store(out_ptr + rows[:, None] * out_row_stride + cols[None, :], out.to(out_ptr.dtype.element_ty), mask=mask)


def bias_gelu(x, bias):
    M, N = x.shape
    out = torch.empty_like(x)
    BLOCK_N = min(triton.next_power_of_2(N), 1024)
    BLOCK_M = min(triton.next_power_of_2(M), max(1, 4096 // BLOCK_N))
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    bias_gelu_kernel[grid](x, bias, out, M, N, x.stride(0), out.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def fused_bytes(m, n, element_size):
    return (2 * m * n + n) * element_size


def unfused_bytes(m, n, element_size):
    return (4 * m * n + n) * element_size
