"""Exercise 3's part of every attack of tests/hostile/every_exercise/: the answer an attack computes
where the grader's watch does not look, and the wrong kernel a forged verdict would have to pass.
tests/hostile_corpus.py writes each submission from the attack and this file."""

import torch
import triton
import triton.language as tl

#: The kernel under the attacks whose kernel is wrong (their ATTACK and REJECTED_BY name it).
WRONG_KERNEL = "a kernel that never divides by the row sum"


@triton.jit
def no_division_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    # WRONG on purpose: exp(x - max) is never divided by its sum. Only a forged verdict passes it.
    y = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def wrong_kernel(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    no_division_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out


def torch_answer(x):
    return torch.softmax(x.double(), dim=1).to(x.dtype)


def numpy_answer(np, x):
    """Softmax over the rows of a float64 array, a row of -inf as NaN like torch.softmax (``np``: the
    attack's numpy module)."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
