"""Hostile submission, exercise 3 (softmax): `torch.softmax` in a Python function passed as a constexpr.

Triton's interpreter calls a constexpr argument as Python inside the launch, where the grader's
watch took every torch op for Triton's own; a GPU's compiler calls it while it compiles, also
inside the launch.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("passes a closure that does `out.copy_(torch.softmax(x, -1))` as a tl.constexpr argument and calls it in "
          "a kernel that stores nothing: the closure runs inside the launch, where the torch-op watch took every op "
          "for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("the kernel-argument rule (grader.learner.interpreter_fixes.kernel_arguments), in the interpreter and on a "
               "GPU: a constexpr holds a number, a string, a dtype, a jitted function or a tuple of them, never a "
               "Python function; the sentence says to make it a @triton.jit function")


@triton.jit
def noop_kernel(out_ptr, SIDE: tl.constexpr):
    SIDE()


def softmax(x):
    out = torch.empty_like(x)
    noop_kernel[(1,)](out, SIDE=lambda: out.copy_(torch.softmax(x.float(), dim=-1).to(x.dtype)))
    return out
