"""Sandbox escape (exercise 1): leaves files in /tmp and /var/tmp for the next submission.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'writes a note into /tmp and /var/tmp at import, which outlives the run on a shared temporary folder'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('open()',)
REJECTED_BY = "the sandbox: /tmp is a private tmpfs (namespaces), /var/tmp is not in the learner's root, the sandbox user's files are deleted after the run (user); the file passes and /tmp is as it was"
#: The sentence the file must get (None: it must pass).
SENTENCE = None

for _folder in ("/tmp", "/var/tmp"):
    try:
        with open(os.path.join(_folder, "grade-note-for-the-next-student"), "w") as _note:
            _note.write("the answer is x + y\n")
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
