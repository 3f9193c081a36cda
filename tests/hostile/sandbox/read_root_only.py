"""Sandbox escape (exercise 1): reads a file only root may read (/etc/shadow): the grader runs as root.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'opens /etc/shadow at import and raises with its first line'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('open()',)
REJECTED_BY = "the sandbox: the learner's process runs as an unprivileged user at every level where the grader is root; the file passes"
#: The sentence the file must get (None: it must pass).
SENTENCE = None

try:
    with open("/etc/shadow") as stolen:
        raise RuntimeError("ESCAPED: " + stolen.readline())
except OSError:
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
