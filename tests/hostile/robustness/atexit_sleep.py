"""Robustness (exercise 1): a correct file with an `atexit` handler that sleeps ten minutes.

The kernel is right; the exit handler runs after the last check has reported, while the grader
waits for the child to end. Today nothing bounds that wait.
"""

import atexit
import time

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel, and an atexit handler that sleeps for LINGER_SECONDS (ten minutes)"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("atexit",)
REJECTED_BY = ("the verdict of its checks (it passes) within the whole-file clock: the child is ended once the "
               "results are in, with a note that the process did not exit by itself")
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "hang"
WALL_SECONDS = 150
LINGER_SECONDS = 600

atexit.register(time.sleep, LINGER_SECONDS)


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
