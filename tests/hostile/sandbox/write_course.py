"""Sandbox escape (exercise 1): appends to the grader's compare.py through the course folder on PYTHONPATH.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'opens grader/judge/compare.py for appending at import and raises if that worked (the file is then changed for the next student)'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('open()',)
REJECTED_BY = "the sandbox: the course is read-only to the learner's process at every level but partial; the file passes and the course is byte-identical"
#: The sentence the file must get (None: it must pass).
SENTENCE = None

def _course() -> str:
    """The course's root: the folder on PYTHONPATH that holds grader/."""
    for folder in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if os.path.isdir(os.path.join(folder, "grader")):
            return folder
    return "/"


try:
    with open(os.path.join(_course(), "grader", "compare.py"), "a") as _target:
        _target.write("")
    raise RuntimeError("ESCAPED: grader/judge/compare.py is writable")
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
