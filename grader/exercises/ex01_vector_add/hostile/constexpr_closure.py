"""Hostile submission, exercise 1 (vector add): the work in a Python function passed as a constexpr.

Triton's interpreter calls a constexpr argument as Python inside the launch, where the grader's
watch takes every torch op for Triton's own; a GPU's compiler calls it while it compiles, also
inside the launch.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("passes a closure that does `out.copy_(x + y)` as a tl.constexpr argument and calls it in a kernel "
          "that stores x: the closure runs inside the launch, where the torch-op watch takes every op for "
          "Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("the kernel-argument rule (grader.learner.interpreter_fixes.kernel_arguments), in the interpreter and on a "
               "GPU: a constexpr holds a number, a string, a dtype, a jitted function or a tuple of them, never a "
               "Python function; the sentence says to make it a @triton.jit function")


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, SIDE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)  # x: wrong on its own
    SIDE()  # after the store: the closure's sum overwrites it


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, SIDE=lambda: out.copy_(x + y))
    return out
