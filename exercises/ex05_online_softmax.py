"""
Exercise 5 · Online softmax
===========================

In this exercise you will learn:

* how to reduce a row that does not fit in one block: one program per row walks it in
  blocks of ``BLOCK_SIZE`` columns with a loop inside the kernel;
* the **online normalizer** (Milakov & Gimelshein, 2018): a single pass keeps the
  running max ``m`` and the running sum ``d = sum(exp(x - m))``; when a block raises the
  max from ``m`` to ``m_new``, the sum so far is rescaled by ``exp(m - m_new)``;
* why a softmax over long rows needs a **second pass**: every output needs the *final*
  ``m`` and ``d``, which exist only after the last element has been read;
* the **byte model** of this algorithm: read the row twice, write it once, ``3 · M · N ·
  element_size`` bytes. (A kernel that holds the row on chip, as in exercise 3, needs
  only two trips, but a row of 2^20 fp32 values is 4 MiB: no program holds that.)

For each row, with ``m = -inf`` and ``d = 0`` to start::

    pass 1, per block:  m_new = max(m, max(block))
                        d     = d * exp(m - m_new) + sum(exp(block - m_new))
                        m     = m_new
    pass 2, per block:  out   = exp(block - m) / d

Fill in the places marked TODO, then run ``grade exercise 5``. Rows in the grader are
several times longer than the largest block, their max sometimes arrives in the last
block, some hold -inf (masked logits), and they sit in buffers full of NaN. ``grade hint
5`` gives a hint.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(
    out_ptr,  # pointer to the output: a new contiguous (n_rows, n_cols) tensor
    x_ptr,  # pointer to the input's first element (x[0, 0])
    # elements between the starts of two consecutive rows of x (>= n_cols)
    x_row_stride,
    out_row_stride,  # elements between the starts of two consecutive rows of out
    n_cols,  # elements in each row: any size, often many times BLOCK_SIZE
    BLOCK_SIZE: tl.constexpr,  # columns read per loop iteration (a power of two)
):
    # One program per row. (In int64: row * stride passes 2^31 for 2048 rows of 2^20
    # columns.)
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)

    # TODO pass 1: loop over the row in blocks (`start = 0`, `while start < n_cols:`,
    # ..., `start += BLOCK_SIZE`), keeping the running max m and the rescaled running
    # sum d as float32 scalars. Mask the lanes past n_cols so they add nothing to d, and
    # mind a block whose values are all -inf.

    # TODO pass 2: loop over the row again and store exp(x - m) / d into out_row.
    pass


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor whose rows may be far longer than
    a block."""
    n_rows, n_cols = x.shape
    # A new contiguous output; empty, not zeros: your kernel writes every element.
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    # A fixed block, never the whole row (the grader's rows are several times 8192
    # columns long).
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    num_warps = 16 if BLOCK_SIZE >= 8192 else 8 if BLOCK_SIZE >= 2048 else 4
    # TODO: launch softmax_online_kernel with one program per row, passing the row
    # strides of x and out, n_cols, BLOCK_SIZE=BLOCK_SIZE and num_warps=num_warps; then
    # delete the line below.
    raise NotImplementedError(
        "exercise 5: write softmax_online_kernel and launch it from softmax_online()"
    )
    return out
