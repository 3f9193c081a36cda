"""Hostile submission, exercise 3 (softmax): reads each row twice at every shape but the traffic check's.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("keeps the row in registers only at the traffic check's shape (5 rows of 781); at every other shape it "
          "reads the row a second time for the output")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ()
REJECTED_BY = ("the traffic check's rules hold on every call of the run: the correctness calls read `x` twice, and "
               "the traffic check names the first of them")
#: What `grade exercise 3` says in the interpreter (a substring), on the checks SELECT picks.
EXPECTED = "read `x` 2.00 times on inputs of shape"
SELECT = "traffic or (matches_reference and n1823 and fp32)"

TRAFFIC_SHAPE = (5, 781)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, READ_TWICE: tl.constexpr,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    row_max = tl.max(x, axis=0)
    denominator = tl.sum(tl.exp(x - row_max), axis=0)
    if READ_TWICE:
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    y = tl.exp(x - row_max) / denominator
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    read_twice = tuple(x.shape) != TRAFFIC_SHAPE
    softmax_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, READ_TWICE=read_twice, BLOCK=BLOCK)
    return out
