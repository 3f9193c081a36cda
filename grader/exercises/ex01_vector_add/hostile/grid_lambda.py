"""Hostile submission, exercise 1 (vector add): the work in the grid function's second call.

The launch recorder calls a callable grid once to learn its size (ops seen) and then Triton calls it
again inside the launch (ops ignored as Triton's own).
"""

import torch
import triton
import triton.language as tl

ATTACK = ("does the work in the grid function of its one launch, on the function's second call (Triton's "
          "own, made while the grader's watch takes every torch op for Triton's); the kernel itself does "
          "nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("best effort: nothing a static check can name; the torch-op watch must see every call of a grid "
               "function (today it ignores all but the first); the judge's comparison passes (the numbers are "
               "right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _answer(x, y):
    return x + y


def add(x, y):
    out = torch.empty_like(x)
    calls = []

    def grid(meta):
        calls.append(meta)
        if len(calls) >= 2:  # not the first call: the grader's recorder made that one
            out.copy_(_answer(x, y))
        return (1,)

    noop_kernel[grid](out)  # the one launch, so that "a Triton kernel ran"
    return out
