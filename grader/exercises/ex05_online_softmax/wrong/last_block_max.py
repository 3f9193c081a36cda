"""Wrong: the second pass subtracts the max of the last block the first loop saw (`block_max`),
not the running max of the whole row. Right only when the row's max is in its last block."""

import torch
import triton
import triton.language as tl

EXPECTED = "normalized with the max of the last block only"
SELECT = "early_spike and fp32"


@triton.jit
def softmax_online_kernel(
    out_ptr,  # pointer to the output: a new contiguous (n_rows, n_cols) tensor
    x_ptr,  # pointer to the input's first element (x[0, 0])
    x_row_stride,  # elements between the starts of two consecutive rows of x (>= n_cols)
    out_row_stride,  # elements between the starts of two consecutive rows of out
    n_cols,  # elements in each row: any size, often many times BLOCK_SIZE
    BLOCK_SIZE: tl.constexpr,  # columns read per loop iteration (a power of two)
):
    # One program per row. In int64: rows * stride passes 2^31 for 2048 rows of 2^20 columns.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)

    # Pass 1: the running max m and the running sum d = sum(exp(x - m)) over the blocks so far.
    m = tl.full((), float("-inf"), tl.float32)
    block_max = tl.full((), float("-inf"), tl.float32)
    d = tl.full((), 0.0, tl.float32)
    # A `while` loop, not `for start in range(0, n_cols, BLOCK_SIZE)`: on a GPU both compile to
    # the same loop (checked for sm_90 with Triton 3.6 and 3.9: 128-bit loads, 39 registers),
    # but Triton 3.6's interpreter cannot take a runtime bound in range() with numpy 2.
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        # Lanes past the end of the row load -inf: they can neither raise the max nor add to
        # the sum (exp(-inf) = 0). Loaded as 0 they would add exp(0 - m) each.
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        block_max = tl.max(x, axis=0)
        m_new = tl.maximum(m, block_max)
        # While every value so far is -inf (a masked prefix, as in causal attention), m_new is
        # -inf and exp(m - m_new) = exp(-inf + inf) = NaN. Measuring against 0 instead gives
        # exp(-inf) = 0 for both terms and keeps d = 0 until a finite value arrives.
        m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
        # The rescale: d was a sum of exp(x - m); exp(x - m) * exp(m - m_new) = exp(x - m_new).
        d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)
        m = m_new
        start += BLOCK_SIZE

    # Pass 2: read the row again (4 MiB at 2^20 fp32 columns: it is not still on chip) and
    # write exp(x - m) / d. One reciprocal per row, then a multiply per element.
    inv_d = 1.0 / d
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - block_max) * inv_d  # the mistake: the last block's max, not m
        tl.store(out_row + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
        start += BLOCK_SIZE


def softmax_online(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor whose rows may be far longer than a block."""
    n_rows, n_cols = x.shape
    # A new contiguous output. empty, not zeros: the kernel writes every element, a fill would
    # be a second kernel launch writing every byte once more.
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    # A fixed block, never the whole row: 8192 fp32 columns are 32 KiB per program per
    # iteration, enough loads in flight to cover the latency of HBM with ~2 programs per SM.
    # Short rows get a block just large enough.
    BLOCK_SIZE = min(8192, triton.next_power_of_2(n_cols))
    num_warps = 16 if BLOCK_SIZE >= 8192 else 8 if BLOCK_SIZE >= 2048 else 4
    softmax_online_kernel[(n_rows,)](
        out, x, x.stride(0), out.stride(0), n_cols,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
    )
    return out
