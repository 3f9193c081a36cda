"""
Exercise 3 · Fused softmax — reference solution
===============================================

In this exercise you will learn:

* how a **reduction** fits in one Triton program: the whole row is one block, held in
  registers, so the max, the exponentials and the sum never leave the chip and every
  element crosses HBM exactly twice (one read, one write: ``2 · M · N · element_size``
  bytes);
* why masked lanes load ``-inf``: it is the identity of ``max``, and ``exp(-inf) = 0``
  adds nothing to the sum. Loaded as 0, each padding lane would add ``exp(0 - max)`` to
  it;
* why the row max is subtracted: ``exp(x)`` overflows float32 above x = 88.7, while
  ``exp(x - max) <= 1`` never does, and the result is mathematically the same;
* how to address rows with a **row stride**, so a column slice of a wider tensor is
  legal input;
* why the output is allocated with ``empty_like``: a ``zeros_like`` is a whole extra
  kernel launch writing every byte of the output once more;
* how long a row one block can hold: the register file decides (`MAX_ROW_BYTES`), and
  the warps of a program share the row between them (`num_warps_for`).

``python -m tools.benchmarks ex03_softmax`` measures this kernel against
``torch.softmax`` and three ways of calling ``torch.compile`` on your GPU; the H200's
run is ``docs/measurements/h200-ex03-softmax.json`` (rows ``kernel=solution``).
"""

import torch
import triton
import triton.language as tl

#: The most bytes of one row held in one block: 128 KiB, that is 32768 float32 values or
#: 65536 float16/bfloat16 values. The block lives in registers. An SM has 65,536 32-bit
#: registers (256 KiB), and a program of 32 warps (1024 threads, the most a program may
#: have) may use at most 64 per thread. A 128 KiB float32 row is 32 values per thread:
#: compiled for sm_90 with 32 warps the kernel uses 53 registers (Triton 3.6; 50 with
#: 3.9) and spills nothing. A 16-bit row of the same bytes is 64 values per thread once
#: converted to float32: all 64 registers, and about 150 bytes per thread spilled to
#: local memory (which the L1 cache holds); the benchmark's bf16 rows at N = 65536
#: measure what that costs. A 256 KiB row would not fit: longer rows are exercise 5
#: (online softmax). ``python -m tools.benchmarks.ex03_softmax --registers`` prints the
#: counts for every row length, dtype and warp count the benchmark times (no GPU
#: needed).
MAX_ROW_BYTES = 128 * 1024


def max_cols(dtype: torch.dtype) -> int:
    """The longest row one block holds for ``dtype``: 32768 float32 or 65536 16-bit
    columns."""
    return MAX_ROW_BYTES // dtype.itemsize


@triton.jit
def softmax_kernel(
    x_ptr,  # pointer to x[0, 0]
    out_ptr,  # pointer to out[0, 0]
    # elements from the start of one row of x to the start of the next: x.stride(0)
    x_row_stride,
    out_row_stride,  # the same for out: out.stride(0)
    n_cols,  # N: elements in each row
    BLOCK: tl.constexpr,  # a power of two >= n_cols: the whole row is one block
):
    # One program per row. The row offset in int64: row * stride passes 2^31 for tensors
    # over 8 GiB.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Lanes past the end of the row load -inf: they cannot win the max, and exp(-inf -
    # max) = 0 adds nothing to the sum. Row r starts r * x_row_stride elements in, not r
    # * n_cols: the rows of a column slice have gaps between them.
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    # Arithmetic in float32 whatever the input dtype: exp and the sum keep float32's 24
    # bits of mantissa (bf16 has 8), and the store rounds once. The GPU loads 16-bit
    # data at the same speed.
    x = x.to(tl.float32)
    # Subtract the max: the largest exponent becomes exp(0) = 1, so nothing overflows.
    z = x - tl.max(x, axis=0)
    numerator = tl.exp(z)
    denominator = tl.sum(numerator, axis=0)
    y = numerator / denominator
    # A row that is entirely -inf has max = -inf and z = -inf - (-inf) = NaN: its
    # softmax is NaN, as torch.softmax's is (0 / 0: there is no distribution over no
    # admissible value).
    tl.store(
        out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask
    )


def num_warps_for(block: int) -> int:
    """Warps per program for a row block of ``block`` elements: about 32 elements per
    thread.

    32 elements per thread are eight 16-byte float32 loads in flight per thread, enough
    to keep the memory pipeline busy, while short rows keep few warps so that many
    programs fit on an SM at once: 1 warp up to 1024 columns, 32 warps (1024 threads,
    the most a program may have) from 32768 on. A 16-bit row of 65536 needs all 32: with
    16 warps it would be 128 values per thread, and ptxas spills more of them. The
    benchmark times half and twice this choice at every row length and dtype (rows
    ``kernel=variant_warps{W}`` in docs/measurements/h200-ex03-softmax.json; ``python -m
    tools.benchmarks.ex03_softmax --summary`` prints which one won).
    """
    return min(32, max(1, block // 1024))


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax of each row of a 2-D tensor ``x`` (any row stride), in a new contiguous
    tensor."""
    if x.ndim != 2 or x.stride(1) != 1:
        raise ValueError(
            "softmax expects a 2-D tensor whose elements within a row are contiguous "
            "(x.stride(1) == 1)"
        )
    n_rows, n_cols = x.shape
    if n_cols > max_cols(x.dtype):
        raise ValueError(
            f"rows of {n_cols} {x.dtype} columns do not fit in one block (at most "
            f"{max_cols(x.dtype)}: "
            f"{MAX_ROW_BYTES // 1024} KiB per row): that is exercise 5, the online "
            "softmax"
        )
    # empty_like, not zeros_like: the kernel writes every element, a fill would be a
    # second launch. (For a column slice of a wider tensor, empty_like returns a
    # contiguous tensor: the output has its own row stride, which is why the kernel
    # takes two.)
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    # One program per row.
    softmax_kernel[(n_rows,)](
        x, out, x.stride(0), out.stride(0), n_cols,
        BLOCK=BLOCK, num_warps=num_warps_for(BLOCK),
    )
    return out
