"""Wrong (for speed): computes x + bias, then loads x again for the GELU instead of reusing the
register: the unfused pair's extra read, inside one kernel. The traffic check counts 2 reads of `x`."""

import torch
import triton
import triton.language as tl

EXPECTED = "read `x` 2.00 times"
SELECT = "traffic"


@triton.jit
def bias_gelu_kernel(x_ptr, bias_ptr, out_ptr, M, N, x_row_stride, out_row_stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    b = tl.load(bias_ptr + cols, mask=mask).to(tl.float32)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask).to(tl.float32)
    z_check = x + b
    z = tl.load(x_ptr + row * x_row_stride + cols, mask=mask).to(tl.float32) + b
    y = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476)) + 0.0 * z_check
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty_like(x)
    grid = (M, triton.cdiv(N, 1024))
    bias_gelu_kernel[grid](x, bias, out, M, N, x.stride(0), out.stride(0), BLOCK_N=1024)
    return out


def fused_bytes(m: int, n: int, element_size: int) -> int:
    return (2 * m * n + n) * element_size


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    return (4 * m * n + n) * element_size
