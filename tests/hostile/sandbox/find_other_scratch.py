"""Sandbox escape (exercise 1): looks for other submissions' private copies in the shared temporary folder.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'walks /tmp for grade-* folders and raises with the first .py file that is not its own copy'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('open()',)
REJECTED_BY = "the sandbox: /tmp is a private tmpfs (namespaces) and other runs' folders are not listable; the file passes"
#: The sentence the file must get (None: it must pass).
SENTENCE = None

def _others():
    mine = os.path.realpath(__file__)
    for top, folders, files in os.walk("/tmp"):
        for name in files:
            path = os.path.realpath(os.path.join(top, name))
            if name.endswith(".py") and path != mine and "grade-" in path:
                try:
                    with open(path) as stolen:
                        yield f"{path}: {stolen.read()[:200]}"
                except OSError:
                    continue


for _found in _others():
    raise RuntimeError("ESCAPED: " + _found)


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
