"""
Exercise 2 · Bias + GELU, fused
===============================

In this exercise you will learn:

* **kernel fusion**: ``gelu(x + bias)`` in eager PyTorch is two kernels, and the
  intermediate ``x + bias`` goes to HBM and straight back. One Triton kernel keeps it in
  registers;
* how to walk a **2-D tensor as one flat range** of M·N elements: element ``i`` is row
  ``i // N``, column ``i % N``; when the rows are contiguous the flat offset *is* the
  address, and when ``x`` has gaps between its rows, row ``r`` starts at ``r *
  stride(0)``;
* **broadcasting** inside a kernel: the bias is one value per column, gathered at ``i %
  N``;
* the exact (erf) GELU, ``z / 2 * (1 + erf(z / sqrt(2)))``, computed in float32 whatever
  the input dtype and rounded once on the store;
* the **byte model** of the fused kernel and of the unfused pair, as code: the ratio of
  the two is the speedup fusion should give, and the grader prints it beside the
  measured times.

Fill in the places marked TODO (the kernel body, the launch, and the two byte-model
functions at the end), then run ``grade exercise 2``. The grader hands you tensors that
sit inside larger buffers full of NaN, and an ``x`` whose rows sometimes have gaps
between them. ``grade hint 2`` gives a hint when you are stuck.
"""

import torch
import triton
import triton.language as tl

#: Elements per program (a power of two); see bias_gelu below.
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
    # TODO: program p handles flat elements p * BLOCK + tl.arange(0, BLOCK) (in int64
    # when not CONTIGUOUS); mask the ones past n_elements. The column is offs % N: load
    # the bias there. If CONTIGUOUS, the flat offset is the address of x and of out;
    # otherwise row = offs // N and the addresses are row * x_row_stride + col and row *
    # out_row_stride + col. Compute z = x + bias in float32, then 0.5 * z * (1 +
    # tl.erf(z / sqrt(2))), and store it into out (converted to out's dtype) with the
    # same mask.
    pass


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``gelu(x + bias)`` (exact erf GELU) for ``x`` of shape (M, N) and ``bias`` of
    shape (N,)."""
    M, N = x.shape
    out = torch.empty_like(x)
    n_elements = M * N
    # The fast path: no gaps between rows, so flat offsets are addresses (and fit in
    # int32).
    contiguous = x.stride(0) == N and out.stride(0) == N and n_elements < 2**31
    # TODO: a 1-D grid with one program per BLOCK elements (rounded up), launch
    # bias_gelu_kernel on it with the row strides of x and out and
    # CONTIGUOUS=contiguous, and delete the line below.
    raise NotImplementedError(
        "exercise 2: launch bias_gelu_kernel from bias_gelu() and write its body"
    )
    return out


# --- the byte model
# ----------------------------------------------------------------------------

def fused_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes ``bias_gelu`` can move for an (m, n) x and an (n,) bias of this
    element size."""
    # TODO: every input read once, every output written once. How many elements is that?
    raise NotImplementedError(
        "exercise 2: count the bytes of the fused kernel in fused_bytes()"
    )


def unfused_bytes(m: int, n: int, element_size: int) -> int:
    """Bytes eager PyTorch moves for ``tmp = x + bias`` then ``out =
    torch.nn.functional.gelu(tmp)``."""
    # TODO: each of the two kernels reads its inputs from memory and writes its output
    # there.
    raise NotImplementedError(
        "exercise 2: count the bytes of the unfused pair in unfused_bytes()"
    )
