"""One program per row, walking the row's columns with ``for start in range(0, N, BLOCK)``;
the row offset is ``row.to(tl.int64) * stride``; GELU written with a division by sqrt(2).
Differs from the solution (flat 1-D range, bias gathered at ``offs % N``)."""

import math

import torch
import triton
import triton.language as tl

SELECT = ("(matches_reference and (1x1 or 5x1025 or 2x4097)) or strided_rows or bias_broadcast or large_magnitudes "
          "or byte_model or traffic")


@triton.jit
def bias_gelu_row_kernel(x_ptr, bias_ptr, out_ptr, N, x_stride, out_stride, SQRT2: tl.constexpr,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * x_stride + cols, mask=mask)
        b = tl.load(bias_ptr + cols, mask=mask)
        z = x.to(tl.float32) + b.to(tl.float32)
        gelu = z * 0.5 * (1.0 + tl.erf(z / SQRT2))
        tl.store(out_ptr + row * out_stride + cols, gelu.to(out_ptr.dtype.element_ty), mask=mask)


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty_like(x)
    block = min(2048, triton.next_power_of_2(N))
    bias_gelu_row_kernel[(M,)](x, bias, out, N, x.stride(0), out.stride(0), SQRT2=math.sqrt(2.0), BLOCK=block)
    return out


def fused_bytes(m: int, n: int, element_size: int) -> int:
    return (m * n + n) * element_size + m * n * element_size


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    return fused_bytes(m, n, element_size) + 2 * m * n * element_size
