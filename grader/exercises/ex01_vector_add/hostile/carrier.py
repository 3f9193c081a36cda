"""Exercise 1's part of every attack of tests/hostile/every_exercise/: the answer an attack computes
where the grader's watch does not look, and the wrong kernel a forged verdict would have to pass.
tests/hostile_corpus.py writes each submission from the attack and this file."""

import torch
import triton
import triton.language as tl

#: The kernel under the attacks whose kernel is wrong (their ATTACK and REJECTED_BY name it).
WRONG_KERNEL = "a kernel that computes x - y"


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # WRONG on purpose: x - y, not x + y. Only a forged verdict passes this kernel.
    tl.store(out_ptr + offsets, (x - y).to(out_ptr.dtype.element_ty), mask=mask)


def wrong_kernel(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


def torch_answer(x, y):
    return x + y


def numpy_answer(np, x, y):
    """The sum of two float64 arrays (``np``: the attack's numpy module; this file imports none)."""
    return x + y
