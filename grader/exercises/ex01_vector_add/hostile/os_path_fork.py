"""Hostile submission, exercise 1 (vector add): the sum computed in a process forked through `os.path`.

`os` is allowed for the environment and paths; `os.path` is a module that imported `os`.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = ("forks a child through os.path.os.fork(); the child computes x + y, outside the learner process's watch, "
          "and sends the sum back through a pipe; the parent copies it into out and launches a kernel that does "
          "nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("os.path.os",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`os.path.os` (a way to the module `os`); in `grade exercise` the copy into `out` is a torch op the "
               "watch records")

_system = os.path.os


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran".
    pid = tl.program_id(0)


def add(x, y):
    out = torch.empty_like(x)
    read, write = _system.pipe()
    if _system.fork() == 0:
        _system.write(write, repr((x + y).tolist()).encode())
        _system._exit(0)
    _system.close(write)
    chunks = []
    while chunk := _system.read(read, 1 << 16):
        chunks.append(chunk)
    values = [float(v) for v in b"".join(chunks).decode().strip("[]").split(",")]
    out.copy_(torch.tensor(values, dtype=out.dtype))
    noop_kernel[(1,)](out)
    return out
