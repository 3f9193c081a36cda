"""
Exercise 2 · Bias + GELU, fused — reference solution
====================================================

In this exercise you will learn:

* **kernel fusion**: ``gelu(x + bias)`` in eager PyTorch is two kernels, and the intermediate
  ``x + bias`` goes to HBM and straight back. One Triton kernel keeps it in registers;
* how to walk a **2-D tensor with any row stride**: a program owns a tile of rows × columns and
  finds row ``r`` at ``r * stride(0)``, so a view with gaps between its rows works too;
* **broadcasting** inside a kernel: the bias is one value per column, loaded once per program and
  reused for every row of its tile;
* the exact (erf) GELU, computed in float32 whatever the input dtype, rounded once on the store;
* the **byte model** of the fused kernel and of the unfused pair, as code (`fused_bytes`,
  `unfused_bytes`): the ratio of bytes is the speedup you should expect.

On an NVIDIA H200 (16384 × 4096 fp32, Triton 3.6), the eager pair took 0.325 ms and a fused
Triton kernel 0.132 ms: 2.5× faster, 95% of the copy ceiling (docs/measurements/).
``python -m grader.benchmarks ex02_bias_gelu`` measures this file against the eager pair and
``torch.compile`` on your GPU.
"""

import torch
import triton
import triton.language as tl

#: Elements per program: 4096 values is 16 KB of fp32 read and 16 KB written, enough for each
#: thread to have several 16-byte loads in flight (what keeps HBM busy), few enough to stay in
#: registers.
TILE_ELEMENTS = 4096


@triton.jit
def bias_gelu_kernel(
    x_ptr,  # pointer to x[0, 0]
    bias_ptr,  # pointer to bias[0]
    out_ptr,  # pointer to out[0, 0]
    M,  # number of rows of x and out
    N,  # number of columns of x and out, and the length of bias
    x_row_stride,  # elements from the start of one row of x to the next (>= N when x has gaps)
    out_row_stride,  # elements from the start of one row of out to the next
    BLOCK_M: tl.constexpr,  # rows per program (a power of two)
    BLOCK_N: tl.constexpr,  # columns per program (a power of two)
):
    # Program (i, j) owns rows [i * BLOCK_M, (i + 1) * BLOCK_M) and columns [j * BLOCK_N, ...).
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    # Neither M nor N is a multiple of the block: the last programs in each direction are partial.
    row_mask = rows < M
    col_mask = cols < N
    mask = row_mask[:, None] & col_mask[None, :]

    # The bias depends on the column only: BLOCK_N values, loaded once and broadcast over the
    # BLOCK_M rows of the tile in registers (`[None, :]`). Indexing it with the 2-D offset of x
    # would read M * N values from an N-element tensor.
    b = tl.load(bias_ptr + cols, mask=col_mask).to(tl.float32)

    # Row r of x starts r * x_row_stride elements after x[0, 0]; that is what lets x be a view with
    # gaps between its rows. int64, because M * stride passes 2^31 elements on an 8 GiB tensor.
    rows64 = rows.to(tl.int64)
    x = tl.load(x_ptr + rows64[:, None] * x_row_stride + cols[None, :], mask=mask)

    # float32 inside for every input dtype: fp16/bf16 values are widened once, the sum and the
    # GELU are computed in float32, and the result is rounded once on the store.
    z = x.to(tl.float32) + b[None, :]
    # The exact GELU: z * Phi(z) = z / 2 * (1 + erf(z / sqrt(2))). 0.7071067811865476 = 1/sqrt(2).
    out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))

    # The only write: x + bias never exists in memory.
    tl.store(out_ptr + rows64[:, None] * out_row_stride + cols[None, :],
             out.to(out_ptr.dtype.element_ty), mask=mask)


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``gelu(x + bias)`` (exact erf GELU) for ``x`` of shape (M, N) and ``bias`` of shape (N,)."""
    assert x.ndim == 2 and bias.shape == (x.shape[1],), "x must be (M, N) and bias (N,)"
    assert x.stride(1) == 1 and bias.stride(0) == 1, "columns of x and bias must be contiguous"
    M, N = x.shape
    # empty_like, not zeros_like: the kernel writes every element, a fill would be a second launch
    # writing every byte once more. (For an x with gaps between rows, empty_like returns a
    # contiguous tensor, so out has its own row stride.)
    out = torch.empty_like(x)
    # Tiles of TILE_ELEMENTS: as wide as the row allows (up to 1024 columns), then as many rows
    # as fill the tile, but no more rows than x has (a (3, 127) input needs no 32-row tile).
    BLOCK_N = min(triton.next_power_of_2(N), 1024)
    BLOCK_M = min(triton.next_power_of_2(M), max(1, TILE_ELEMENTS // BLOCK_N))
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    bias_gelu_kernel[grid](x, bias, out, M, N, x.stride(0), out.stride(0),
                           BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


# --- the byte model ----------------------------------------------------------------------------

def fused_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes ``bias_gelu`` can move: read x and bias once, write out once.

    The bias is N elements, not M * N: every row reuses it, and after the first tile has read it
    from HBM the other tiles find it in the L2 cache.
    """
    return (m * n + n + m * n) * element_size


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    """Bytes the eager pair moves: ``tmp = x + bias`` then ``out = torch.nn.functional.gelu(tmp)``.

    The first kernel reads x and bias and writes tmp; the second reads tmp back and writes out.
    tmp's round trip (2 * M * N elements) is exactly what fusion removes.
    """
    first = m * n + n + m * n  # x + bias: read x, read bias, write tmp
    second = m * n + m * n  # gelu: read tmp, write out
    return (first + second) * element_size
