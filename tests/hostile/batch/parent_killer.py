"""Hostile submission, class batch (exercise 1): the parent killer.

At import, `os.kill(os.getppid(), signal.SIGKILL)`: the learner's process is a direct child of
the `grade batch` process, which dies at once. Nobody after it is graded and nothing is written.

Today the learner's code runs as the same user as the grader, in a child of the grade process.
"""

import os
import signal

import torch
import triton
import triton.language as tl

ATTACK = ("sends SIGKILL to its parent process (the `grade batch` process) at import: the batch ends with nothing "
          "written")
KIND = "batch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("signal", "os.kill", "os.getppid")
REJECTED_BY = ("the sandbox: the learner's process runs as another (unprivileged) user in its own PID namespace or "
               "under a supervisor it cannot signal; the batch goes on and this file gets a sentence")
#: The class folder the batch runs on: this file and its classmates (paths in the repository).
CLASS = {"a_killer.py": None, "b_honest.py": "solutions/ex01_vector_add.py"}
#: What today's grader lets happen (checked by run_today.py).
TODAY = "kills_batch"

os.kill(os.getppid(), signal.SIGKILL)


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
