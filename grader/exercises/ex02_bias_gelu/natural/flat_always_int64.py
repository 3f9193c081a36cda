"""The solution's flat walk without its contiguous fast path: every element's row and column
come from ``//`` and ``%`` on int64 offsets, for contiguous and strided inputs alike, with
blocks of 2048 elements. Differs from the solution only in that specialization and the block."""

import torch
import triton
import triton.language as tl

SELECT = "(matches_reference and (3x127 or 7x129)) or strided_rows or extreme_shapes or byte_model"


@triton.jit
def kernel(x_ptr, bias_ptr, out_ptr, total, N, sx, so, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = i < total
    r = i // N
    c = i % N
    x = tl.load(x_ptr + r * sx + c, mask=valid, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + c, mask=valid, other=0.0).to(tl.float32)
    z = x + b
    cdf = 0.5 * (1.0 + tl.math.erf(z * 0.7071067811865476))
    tl.store(out_ptr + r * so + c, (z * cdf).to(out_ptr.dtype.element_ty), mask=valid)


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty_like(x)
    kernel[(triton.cdiv(m * n, 2048),)](x, bias, out, m * n, n, x.stride(0), out.stride(0), BLOCK=2048)
    return out


def fused_bytes(m: int, n: int, element_size: int) -> int:
    return (2 * m * n + n) * element_size


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    return (4 * m * n + n) * element_size
