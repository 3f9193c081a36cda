"""Robustness (exercise 1): a correct file that forks a child which ignores SIGTERM and sleeps.

Today nothing waits for, or kills, the processes a learner's file starts once the checks have
reported: the forked child outlives `grade` (for LINGER_SECONDS), still holding the files it
inherited.
"""

import os
import signal
import time

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel, and a child forked at import that ignores SIGTERM and sleeps for LINGER_SECONDS"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("os.fork", "signal")
REJECTED_BY = ("its verdict (it passes), and no process left behind: every process the file starts dies with it "
               "(process group killed with SIGKILL, PR_SET_PDEATHSIG)")
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "orphan"
WALL_SECONDS = 200
#: How long the forked child lives (bounded, so that a forgotten process ends by itself).
LINGER_SECONDS = 300

if os.fork() == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(LINGER_SECONDS)
    os._exit(0)


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
