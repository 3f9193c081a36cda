"""Sandbox escape (exercise 1): allocates 4 GiB at import, past the memory limit the test gives the sandbox (2 GiB).

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the file gets the sentence SENTENCE names.
"""
import torch
import triton
import triton.language as tl

ATTACK = 'allocates a 4 GiB tensor with torch.empty at import (pages are only reserved until touched) and raises if that worked'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = 'the memory limit (RLIMIT_DATA): the allocation fails and the file gets the sentence that it used more than N GiB'
#: The sentence the file must get (None: it must pass).
SENTENCE = "GiB of memory, the sandbox's limit"

_ballast = torch.empty(4 << 30, dtype=torch.uint8)
raise RuntimeError("ESCAPED: 4 GiB allocated")


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
