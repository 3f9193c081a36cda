"""Wrong: loads unmasked (reads the guard past the end of `x`), masks only the store, and
mixes the neighbour into the answer: out[i] = x[i] + y[i] + 0 * x[i + 1]. NaN from the guard
poisons the last element."""

import torch
import triton
import triton.language as tl

EXPECTED = "read past the end of `x`"
SELECT = "matches_reference and n1025 and fp32"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    nxt = tl.load(x_ptr + offsets + 1)  # no mask: the last lane reads past the end of x
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y + 0.0 * nxt, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
