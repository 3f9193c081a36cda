"""
Exercise 5 · Online softmax — reference solution
================================================

In this exercise you will learn:

* how to reduce a row that does not fit in one block: walk it in blocks of
  ``BLOCK_SIZE`` columns with a loop inside the kernel, one program per row;
* the **online normalizer** (Milakov & Gimelshein, 2018): one pass keeps the running max
  ``m`` and the running sum ``d = sum(exp(x - m))``, and when a block raises the max
  from ``m_old`` to ``m_new`` the sum so far is rescaled by ``exp(m_old - m_new)``;
* why a softmax over long rows needs a **second pass**: every output needs the final
  ``m`` and ``d``, which exist only after the last element has been read;
* the **byte model** of this algorithm: read the row twice and write it once, ``3 · M ·
  N · element_size`` bytes. A kernel that holds the whole row on chip (exercise 3) needs
  only ``2 · M · N · element_size``, but a row of 2^20 fp32 values is 4 MiB and does not
  fit in one program's registers, so for long rows the third trip is the price of the
  algorithm, and it is what the grader counts.

The two passes, for one row, with ``m = -inf`` and ``d = 0`` to start::

    pass 1, per block:  m_new = max(m, max(block))
                        d     = d * exp(m - m_new) + sum(exp(block - m_new))
                        m     = m_new
    pass 2, per block:  out   = exp(block - m) / d
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
    # One program per row. In int64: rows * stride passes 2^31 for 2048 rows of 2^20
    # columns.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)

    # Pass 1: the running max m and the running sum d = sum(exp(x - m)) over the blocks
    # so far.
    m = tl.full((), float("-inf"), tl.float32)
    d = tl.full((), 0.0, tl.float32)
    # A `while` loop; `for start in range(0, n_cols, BLOCK_SIZE)` is the same loop on a
    # GPU (checked for sm_90 with Triton 3.6 and 3.9: 128-bit loads, 39 registers), but
    # Triton 3.6's own interpreter cannot take a runtime bound in range() under NumPy
    # 2.4 (`grade` patches that; this file runs without the patch too).
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        # Lanes past the end of the row load -inf: they can neither raise the max nor
        # add to the sum (exp(-inf) = 0). Loaded as 0 they would add exp(0 - m) each.
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        # While every value so far is -inf (a masked prefix, as in causal attention),
        # m_new is -inf and exp(m - m_new) = exp(-inf + inf) = NaN. Measuring against 0
        # instead gives exp(-inf) = 0 for both terms and keeps d = 0 until a finite
        # value arrives.
        m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
        # The rescale: d was a sum of exp(x - m); exp(x - m) * exp(m - m_new) = exp(x -
        # m_new).
        d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)
        m = m_new
        start += BLOCK_SIZE

    # Pass 2: read the row again (4 MiB at 2^20 fp32 columns: it is not still on chip)
    # and write exp(x - m) / d. One reciprocal per row, then a multiply per element.
    inv_d = 1.0 / d
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) * inv_d
        tl.store(out_row + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
        start += BLOCK_SIZE


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor whose rows may be far longer than
    a block."""
    n_rows, n_cols = x.shape
    # A new contiguous output. empty, not zeros: the kernel writes every element, a fill
    # would be a second kernel launch writing every byte once more.
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    # A fixed block, never the whole row: 8192 fp32 columns are 32 KiB per program per
    # iteration, enough loads in flight to cover the latency of HBM with ~2 programs per
    # SM. Short rows get a block just large enough.
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    num_warps = 16 if BLOCK_SIZE >= 8192 else 8 if BLOCK_SIZE >= 2048 else 4
    softmax_online_kernel[(n_rows,)](
        out, x, x.stride(0), out.stride(0), n_cols,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
    )
    return out
