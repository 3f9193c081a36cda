"""Sandbox escape (exercise 1): reads the course's solution to exercise 1 through the folder on PYTHONPATH.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'reads solutions/ex01_vector_add.py from the course folder named on PYTHONPATH at import; a leak raises with its text'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('open()',)
REJECTED_BY = "the sandbox: only the course's grader/ package is in the learner's root (namespaces) or readable by others (user); the file passes, and no message holds the solution"
#: The sentence the file must get (None: it must pass).
SENTENCE = None

def _course() -> str:
    """The course's root: the folder on PYTHONPATH that holds grader/."""
    for folder in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if os.path.isdir(os.path.join(folder, "grader")):
            return folder
    return "/"


try:
    with open(os.path.join(_course(), "solutions", "ex01_vector_add.py")) as stolen:
        raise RuntimeError("ESCAPED: " + stolen.read()[:300])
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
