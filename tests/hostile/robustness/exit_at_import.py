"""Robustness (exercise 1): `os._exit(0)` at import.

A learner's script habit (exit once a quick test is done). Today the child ends before it reports
anything, with status 0: `grade` says "FAILED (0 checks failed)" and gives no reason.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = "calls os._exit(0) at import, before any check reports"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("os._exit",)
REJECTED_BY = ("a sentence: your file ended the process (exit status 0) while it was being imported, before any "
               "check ran")
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "no_reason"
WALL_SECONDS = 120

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
