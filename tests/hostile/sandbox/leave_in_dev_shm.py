"""Sandbox escape (exercise 1): leaves 64 MiB and a note in /dev/shm for the next submission.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'writes a 64 MiB file and a note into /dev/shm at import, which outlive the run on a shared /dev/shm'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('open()',)
REJECTED_BY = "the sandbox: /dev/shm is a private tmpfs that dies with the run (namespaces), or the sandbox user's files are deleted after it (user); the file passes and /dev/shm is as it was"
#: The sentence the file must get (None: it must pass).
SENTENCE = None

try:
    with open("/dev/shm/grade-note-for-the-next-student", "w") as _note:
        _note.write("the answer is x + y\n")
    with open("/dev/shm/grade-ballast", "wb") as _ballast:
        _ballast.write(b"\0" * (64 << 20))
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
