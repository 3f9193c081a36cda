"""Robustness (exercise 1): a correct file that allocates a 1 GiB scratch tensor it never uses.

A leftover from an experiment: `add` allocates `torch.empty(2**28)` (float32) before the real
output and never touches it. The grader intercepts every allocation into a guarded buffer it
checks after the call; those checks once built several full-size masks and copies per
allocation, so this one unused line grew the judge by 3.3 GiB.
"""

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel, and an unused 1 GiB torch.empty in the launcher"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("its verdict (it passes), with the judge's memory bounded: an intercepted allocation is checked "
               "in chunks, never copied whole")
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "memory"
WALL_SECONDS = 240


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    total = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) + tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    scratch = torch.empty(2**28, dtype=torch.float32, device=x.device)  # left from an experiment
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
