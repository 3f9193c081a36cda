"""Sandbox escape (exercise 1): plants a symlink to a root-only file where the learner's output went, then exits with the sandbox's failure code.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the file gets the sentence SENTENCE names.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'replaces output.txt in its folder and the folder above with symlinks to /etc/shadow, then os._exit(96), the status a sandbox setup failure had'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('os._exit',)
REJECTED_BY = "the judge reads the learner's output through the descriptor it opened, in a folder the learner cannot write, and a setup failure travels on a channel the learner never holds: a sentence that the file ended the process, no line of /etc/shadow"
#: The sentence the file must get (None: it must pass).
SENTENCE = 'importing your file ended the process'

for _place in ("output.txt", "../output.txt"):
    try:
        if os.path.lexists(_place):
            os.unlink(_place)
        os.symlink("/etc/shadow", _place)
    except OSError:
        pass
os._exit(96)


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
