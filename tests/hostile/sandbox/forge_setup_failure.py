"""Sandbox escape (exercise 1): prints what a sandbox setup failure looks like and exits with its code.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the file gets the sentence SENTENCE names.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = "writes 'grader sandbox: ...' to stderr and exits with status 96 and 97 (os._exit) at import"
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('os._exit',)
REJECTED_BY = "a setup failure travels on a channel the learner's process never holds: the file gets the sentence that it ended the process, not a grader failure"
#: The sentence the file must get (None: it must pass).
SENTENCE = 'importing your file ended the process'

os.write(2, b"grader sandbox: mount failed: Operation not permitted (errno 1)\n")
os._exit(96 if os.getpid() % 2 else 97)


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
