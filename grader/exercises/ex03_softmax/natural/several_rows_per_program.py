"""Several rows per program: a 2-D tile of ROWS x BLOCK values, reduced along ``axis=1`` (the
max and the sum are vectors, one per row), with rows past the end masked out of the loads and
the store. Differs from the solution (one row per program, 1-D reductions)."""

import torch
import triton
import triton.language as tl

SELECT = "(matches_reference and (n1 or n2 or n781)) or strided_rows or masked_logits or fully_masked_row or traffic"


@triton.jit
def softmax_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, sx, so, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    rows = rows.to(tl.int64)
    x = tl.load(x_ptr + rows[:, None] * sx + cols[None, :], mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(shifted)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(out_ptr + rows[:, None] * so + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    ROWS = max(1, min(8, 4096 // BLOCK))
    softmax_rows_kernel[(triton.cdiv(n_rows, ROWS),)](x, out, n_rows, n_cols, x.stride(0), out.stride(0),
                                                      ROWS=ROWS, BLOCK=BLOCK)
    return out
