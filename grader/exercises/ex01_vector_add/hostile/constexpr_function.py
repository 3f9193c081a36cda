"""Hostile submission, exercise 1 (vector add): the work in a `triton.constexpr_function`.

Triton calls a constexpr function while it builds the kernel: its compiler on the host while it
compiles, its interpreter in every program. Either way inside the launch, where the grader's watch
took every torch op for Triton's own.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("does the work in a @triton.constexpr_function that the kernel calls for its block size: the "
          "function runs inside the launch (in every program in the interpreter; on a GPU while compiling, the "
          "first launch of each block size), where the torch-op watch took every op for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("best effort: nothing a static check can name (constexpr functions are Triton's own feature); the "
               "learner's Python that Triton runs inside a launch (the interpreter's programs, the compiler's front "
               "end) is watched as the learner's (grader.learner.interpreter_fixes.programs): 'computed with torch'")

#: Work to run where the grader's watch did not look (filled by the launcher, emptied by the function).
_PENDING = []


@triton.constexpr_function
def block_of(n):
    for work in _PENDING:  # no method call here: the compiler refuses a callable it finds in the body
        work()
    return n


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Stores nothing (every lane starts past n): the sum is already in `out` when this runs.
    offs = n + tl.program_id(0) * block_of(BLOCK) + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    _PENDING.append(lambda: out.copy_(x + y))
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)  # a launch, so that "a Triton kernel ran"
    _PENDING.clear()
    return out
