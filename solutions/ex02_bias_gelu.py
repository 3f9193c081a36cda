"""
Exercise 2 · Bias + GELU, fused — reference solution
====================================================

In this exercise you will learn:

* **kernel fusion**: ``gelu(x + bias)`` in eager PyTorch is two kernels, and the
  intermediate ``x + bias`` goes to HBM and straight back. One Triton kernel keeps it in
  registers;
* how to walk a **2-D tensor as one flat range** of M·N elements: element ``i`` is row
  ``i // N``, column ``i % N``; when the rows are contiguous the flat offset *is* the
  address, and when ``x`` has gaps between its rows, row ``r`` starts at ``r *
  stride(0)``;
* **broadcasting** inside a kernel: the bias is one value per column, gathered at ``i %
  N``; every row re-reads the same N values, which the GPU serves from its L2 cache;
* the exact (erf) GELU, computed in float32 whatever the input dtype, rounded once on
  the store;
* the **byte model** of the fused kernel and of the unfused pair, as code
  (`fused_bytes`, `unfused_bytes`): the ratio of bytes is the speedup you should expect.

Measured on an NVIDIA H200 (16384 × 4096 fp32, Triton 3.6):
docs/measurements/h200-ex02-bias-gelu.json holds this kernel, the eager pair and
``torch.compile`` (``rows[kernel=...,dtype=fp32].fraction``); h200-tiles-ex02.json holds
fourteen 2-D tilings (a program owns rows × columns, ``rows[kernel=tile]``). ``python -m
tools.benchmarks ex02_bias_gelu`` measures this file against the eager pair and
``torch.compile`` on your GPU.
"""

import torch
import triton
import triton.language as tl

#: Elements per program: 1024 values with 4 warps is 8 fp32 values per thread, two
#: 16-byte loads in flight each. On the H200 this beat 2048 and 4096 with 4 warps
#: (docs/measurements/h200-tiles-ex02.json, rows[kernel=columns
#: fastest,BLOCK_M=1,dtype=fp32] by BLOCK_N).
BLOCK = 1024


@triton.jit
def bias_gelu_kernel(
    x_ptr,  # pointer to x[0, 0]
    bias_ptr,  # pointer to bias[0]
    out_ptr,  # pointer to out[0, 0]
    n_elements,  # M * N: the result as one flat, row-major range
    N,  # number of columns of x and out, and the length of bias
    # elements from the start of one row of x to the next (>= N when x has gaps)
    x_row_stride,
    out_row_stride,  # elements from the start of one row of out to the next
    BLOCK: tl.constexpr,  # elements per program (a power of two)
    # rows of x and out back to back (stride N) and fewer than 2^31 elements
    CONTIGUOUS: tl.constexpr,
):
    # Program p handles flat elements [p * BLOCK, (p + 1) * BLOCK); the last one may run
    # past the end.
    if CONTIGUOUS:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    else:
        # int64: with gaps between rows, row * stride passes 2^31 long before M * N
        # does.
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    # The bias depends on the column only. Gathering it at offs % N reads N values again
    # for every row; after the first rows they come from L2, not HBM, so they cost no
    # HBM bytes to speak of. (Indexing the bias with offs itself would read M * N values
    # from an N-element tensor.)
    col = offs % N
    b = tl.load(bias_ptr + col, mask=mask).to(tl.float32)
    if CONTIGUOUS:
        # Rows back to back: the flat offset is the address.
        x_offs = offs
        out_offs = offs
    else:
        # Row r of x starts r * x_row_stride elements after x[0, 0]: that is what lets x
        # be a view with gaps between its rows (at the price of one integer division per
        # element).
        row = offs // N
        x_offs = row * x_row_stride + col
        out_offs = row * out_row_stride + col
    x = tl.load(x_ptr + x_offs, mask=mask)

    # float32 inside for every input dtype: fp16/bf16 values are widened once, the sum
    # and the GELU are computed in float32, and the result is rounded once on the store.
    z = x.to(tl.float32) + b
    # The exact GELU: z * Phi(z) = z / 2 * (1 + erf(z / sqrt(2))). 0.7071067811865476 =
    # 1/sqrt(2).
    out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))

    # The only write: x + bias never exists in memory.
    tl.store(out_ptr + out_offs, out.to(out_ptr.dtype.element_ty), mask=mask)


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``gelu(x + bias)`` (exact erf GELU) for ``x`` of shape (M, N) and ``bias`` of
    shape (N,)."""
    assert x.ndim == 2 and bias.shape == (x.shape[1],), "x must be (M, N) and bias (N,)"
    assert (
        x.stride(1) == 1 and bias.stride(0) == 1
    ), "columns of x and bias must be contiguous"
    M, N = x.shape
    # empty_like, not zeros_like: the kernel writes every element, a fill would be a
    # second launch writing every byte once more. (For an x with gaps between rows,
    # empty_like returns a contiguous tensor, so out has its own row stride.)
    out = torch.empty_like(x)
    n_elements = M * N
    contiguous = x.stride(0) == N and out.stride(0) == N and n_elements < 2**31
    grid = (triton.cdiv(n_elements, BLOCK),)
    bias_gelu_kernel[grid](x, bias, out, n_elements, N, x.stride(0), out.stride(0),
                           BLOCK=BLOCK, CONTIGUOUS=contiguous)
    return out


# --- the byte model
# ----------------------------------------------------------------------------

def fused_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes ``bias_gelu`` can move: read x and bias once, write out once.

    The bias is N elements, not M * N: every row reuses it, and after the first tile has
    read it from HBM the other tiles find it in the L2 cache.
    """
    return (m * n + n + m * n) * element_size


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    """Bytes the eager pair moves: ``tmp = x + bias`` then ``out =
    torch.nn.functional.gelu(tmp)``.

    The first kernel reads x and bias and writes tmp; the second reads tmp back and
    writes out. tmp's round trip (2 * M * N elements) is exactly what fusion removes.
    """
    first = m * n + n + m * n  # x + bias: read x, read bias, write tmp
    second = m * n + m * n  # gelu: read tmp, write out
    return (first + second) * element_size
