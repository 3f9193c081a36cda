"""Hostile submission, exercise 1 (vector add): the work in a Python function held by a `tl.constexpr` global.

A kernel may read a module-level `tl.constexpr`; one that holds a Python function is called by the
compiler on the host while it compiles, and by the interpreter in every program: inside the launch.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("holds a Python function that runs pending torch work in a module-level tl.constexpr and calls it from "
          "the kernel, which stores nothing: the function runs inside the launch, where the torch-op watch took "
          "every op for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("the compiler's rule on globals, held in the interpreter (grader.learner.interpreter_fixes.constexpr_globals): "
               "a tl.constexpr global holds a number, a string, a dtype or a jitted function; the sentence names the "
               "kernel line that reads it and says to make it a @triton.jit function")

_PENDING = []


def _deliver():
    while _PENDING:
        _PENDING.pop()()


DELIVER = tl.constexpr(_deliver)


@triton.jit
def noop_kernel(out_ptr):
    DELIVER()


def add(x, y):
    out = torch.empty_like(x)
    _PENDING.append(lambda: out.copy_(x + y))
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
