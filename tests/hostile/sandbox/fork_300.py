"""Sandbox escape (exercise 1): forks 300 children that sleep.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the file gets the sentence SENTENCE names.
"""

import os
import time

import torch
import triton
import triton.language as tl

ATTACK = 'forks 300 times at import, each child sleeping LINGER_SECONDS'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('os.fork',)
REJECTED_BY = 'the process limit: the fork past it fails, and the file gets the sentence that it started more than N processes; no child is left'
#: The sentence the file must get (None: it must pass).
SENTENCE = "processes (threads count too), the sandbox's limit"

LINGER_SECONDS = 120
for _ in range(300):
    if os.fork() == 0:
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
