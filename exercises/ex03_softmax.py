"""
Exercise 3 · Fused softmax
==========================

In this exercise you will learn:

* how a **reduction** fits in one Triton program: the whole row is one block, held in
  registers, so the max, the exponentials and the sum never leave the chip and every
  element crosses HBM exactly twice (one read, one write: ``2 · M · N · element_size``
  bytes);
* why masked lanes must load ``-inf``: it is the identity of ``max``, and ``exp(-inf) =
  0`` adds nothing to the sum;
* why the row max is subtracted before ``exp``: in float32, ``exp(x)`` is infinite above
  88.7;
* how to address rows with a **row stride**, so a column slice of a wider tensor is
  legal input.

The contract: ``softmax(x)`` takes a 2-D tensor (M, N) of float32, float16 or bfloat16
whose rows may be any distance apart (``x.stride(0) >= N``), with rows of up to 128 KiB
(N up to 32768 in float32, 65536 in float16 or bfloat16), and returns a new contiguous
tensor of the same shape and dtype. A logit of -inf gives exactly 0; a row that is
entirely -inf gives NaN, as ``torch.softmax`` does. One kernel launch per call.

Fill in the places marked TODO, then run ``grade exercise 3``. ``grade hint 3`` gives a
hint when you are stuck.
"""

import torch
import triton
import triton.language as tl

#: The most bytes of one row held in one block: 128 KiB, 32768 float32 or 65536 16-bit
#: values (exercise 5 handles longer rows). The block lives in registers: with 32 warps
#: (1024 threads) a 128 KiB float32 row is 32 values per thread, half of the 64
#: registers each thread may use.
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
    # TODO: this program's row is tl.program_id(0). Load the row's n_cols elements (the
    # lanes past n_cols are masked: what value must they load?), convert to float32,
    # subtract the row max, exponentiate, divide by the sum, and store into the same row
    # of out, converted to out's dtype (out_ptr.dtype.element_ty).
    pass


def num_warps_for(block: int) -> int:
    """Warps per program for a row block of ``block`` elements: about 32 elements per
    thread.

    Given (not part of the exercise): few warps for short rows so that many programs fit
    on an SM at once, up to 32 warps (1024 threads, the most a program may have) for the
    longest rows, which only fit in registers when every thread holds a share of them.
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
            f"{max_cols(x.dtype)})"
        )
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    # TODO: launch softmax_kernel with one program per row, passing both row strides
    # (x.stride(0) and out.stride(0): they differ when x is a column slice), BLOCK and
    # num_warps=num_warps_for(BLOCK). Then delete the line below.
    raise NotImplementedError(
        "exercise 3: write softmax_kernel and launch it from softmax()"
    )
    return out
