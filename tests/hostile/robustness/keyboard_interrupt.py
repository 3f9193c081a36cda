"""Robustness (exercise 1): a KeyboardInterrupt raised inside `add`, in one check.

A correct vector add that raises KeyboardInterrupt (a learner's leftover, or a library that
raises it) for one input, n = 1025 in float32. Today pytest treats it as the user's Ctrl-C and
stops, and the parent reads the check that was running as a crash: "your kernel most likely read
or wrote far outside its tensors", which is not what happened.
"""

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel, but add raises KeyboardInterrupt for n = 1025 in float32"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("KeyboardInterrupt",)
REJECTED_BY = "a sentence that says add raised KeyboardInterrupt (and where), not a memory error"
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "wrong_sentence"
WALL_SECONDS = 400
#: The sentence today's grader gives instead of the truth.
TODAY_SENTENCE = "far outside its tensors"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    total = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) + tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    if x.numel() == 1025 and x.dtype == torch.float32:
        raise KeyboardInterrupt
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
