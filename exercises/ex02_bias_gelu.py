"""
Exercise 2 · Bias + GELU, fused
===============================

In this exercise you will learn:

* **kernel fusion**: ``gelu(x + bias)`` in eager PyTorch is two kernels, and the intermediate
  ``x + bias`` goes to HBM and straight back. One Triton kernel keeps it in registers;
* how to walk a **2-D tensor with any row stride**: a program owns a tile of rows × columns and
  finds row ``r`` at ``r * stride(0)``, so a view with gaps between its rows works too;
* **broadcasting** inside a kernel: the bias is one value per column, shared by every row;
* the exact (erf) GELU, ``z / 2 * (1 + erf(z / sqrt(2)))``, computed in float32 whatever the
  input dtype and rounded once on the store;
* the **byte model** of the fused kernel and of the unfused pair, as code: the ratio of the two
  is the speedup fusion should give, and the grader prints it beside the measured times.

Fill in the places marked TODO (the kernel body, the launch, and the two byte-model functions at
the end), then run ``grade exercise 2``. The grader hands you tensors that sit inside larger
buffers full of NaN, and an ``x`` whose rows sometimes have gaps between them.
``grade hint 2`` gives a hint when you are stuck.
"""

import torch
import triton
import triton.language as tl

#: Elements per program (a tile of BLOCK_M rows x BLOCK_N columns); see bias_gelu below.
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
    # TODO: program (i, j) owns rows i * BLOCK_M + tl.arange(0, BLOCK_M) and columns
    # j * BLOCK_N + tl.arange(0, BLOCK_N). Build a 2-D mask for the partial tiles at the edges,
    # load the bias for these columns and the tile of x (row r starts at r * x_row_stride),
    # compute z = x + bias in float32, then 0.5 * z * (1 + tl.erf(z / sqrt(2))), and store it
    # into out (converted to out's dtype) with the same mask.
    pass


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``gelu(x + bias)`` (exact erf GELU) for ``x`` of shape (M, N) and ``bias`` of shape (N,)."""
    M, N = x.shape
    out = torch.empty_like(x)
    # Tiles of TILE_ELEMENTS: as wide as the row allows (up to 1024 columns), then as many rows
    # as fill the tile, but no more rows than x has.
    BLOCK_N = min(triton.next_power_of_2(N), 1024)
    BLOCK_M = min(triton.next_power_of_2(M), max(1, TILE_ELEMENTS // BLOCK_N))
    # TODO: a 2-D grid with one program per tile (both directions rounded up), launch
    # bias_gelu_kernel on it with the row strides of x and out, and delete the line below.
    raise NotImplementedError("exercise 2: launch bias_gelu_kernel from bias_gelu() and write its body")
    return out


# --- the byte model ----------------------------------------------------------------------------

def fused_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes ``bias_gelu`` can move for an (m, n) x and an (n,) bias of this element size."""
    # TODO: every input read once, every output written once. How many elements is that?
    raise NotImplementedError("exercise 2: count the bytes of the fused kernel in fused_bytes()")


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    """Bytes eager PyTorch moves for ``tmp = x + bias`` then ``out = torch.nn.functional.gelu(tmp)``."""
    # TODO: each of the two kernels reads its inputs from memory and writes its output there.
    raise NotImplementedError("exercise 2: count the bytes of the unfused pair in unfused_bytes()")
