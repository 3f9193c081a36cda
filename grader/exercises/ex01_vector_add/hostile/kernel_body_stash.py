"""Hostile submission, exercise 1 (vector add): torch work reached from the kernel's body.

A kernel may read a module (``tl``) and what hangs off it. The launcher hangs its pending work on
``tl.float32`` (through a list, so no assignment names a module), and the kernel's body runs it: in
Triton's interpreter a program is Python, run inside the launch.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("hangs a list of pending torch work on the tl.float32 object and has the kernel's body run it; the kernel "
          "stores nothing: the body runs inside the launch, where the torch-op watch took every op for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("best effort: nothing a static check can name; the interpreter's programs run in the learner's "
               "context (grader.learner.interpreter_fixes.programs), so the watch records their torch ops: 'computed with "
               "torch'")

_PENDING = []
[tl.float32][0].pending = _PENDING


@triton.jit
def noop_kernel(out_ptr):
    while len(tl.float32.pending) > 0:
        tl.float32.pending.pop()()


def add(x, y):
    out = torch.empty_like(x)
    _PENDING.append(lambda: out.copy_(x + y))
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
