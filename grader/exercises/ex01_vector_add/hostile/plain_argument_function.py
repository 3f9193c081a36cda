"""Hostile submission, exercise 1 (vector add): a Python function passed as a plain kernel argument.

Triton's interpreter passes an argument it cannot convert to the kernel as it is, so the kernel can
call it; the compiler refuses to specialize it. Called inside the launch, where the grader's watch
took every torch op for Triton's own.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("passes a closure that does `out.copy_(x + y)` as a kernel argument without tl.constexpr and calls it in "
          "the kernel, which stores nothing: Triton's interpreter hands the function over as it is")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("the compiler's specialization of kernel arguments, held in the interpreter "
               "(grader.learner.interpreter_fixes.kernel_arguments): its own words, 'failed to specialize argument of type: "
               "function'")


@triton.jit
def noop_kernel(out_ptr, side):
    side()


def add(x, y):
    out = torch.empty_like(x)
    noop_kernel[(1,)](out, lambda: out.copy_(x + y))  # a launch, so that "a Triton kernel ran"
    return out
