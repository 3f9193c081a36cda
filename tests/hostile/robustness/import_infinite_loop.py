"""Robustness (exercise 1): an infinite loop at import.

A learner's debugging loop left at module level. Today the per-check timeout only runs while a
check runs, and the import happens before any check starts: `grade` waits forever.
"""

import torch
import triton
import triton.language as tl

ATTACK = "loops forever at import (a `while True` left at module level)"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = "timed out after the whole-file clock, with a sentence that names the import"
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "hang"
WALL_SECONDS = 60

while True:
    pass


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    total = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) + tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
