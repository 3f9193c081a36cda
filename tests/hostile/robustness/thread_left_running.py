"""Robustness (exercise 1): a correct file that leaves a non-daemon thread running.

The kernel is right, but the file starts a (non-daemon) background thread at import that outlives
the checks. Python waits for such threads before it exits, so the grader's child never ends, and
today nothing bounds a child once its last check has reported: `grade` (and every later file of a
batch, even with --timeout) waits forever.
"""

import threading
import time

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel, and a non-daemon thread started at import that sleeps for LINGER_SECONDS"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("threading",)
REJECTED_BY = ("the verdict of its checks (it passes) within the whole-file clock: the child is ended once the "
               "results are in, with a note that the process did not exit by itself")
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "hang"
WALL_SECONDS = 150
#: How long the thread lives (bounded, so that a forgotten process ends by itself).
LINGER_SECONDS = 600

threading.Thread(target=time.sleep, args=(LINGER_SECONDS,), daemon=False).start()


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
