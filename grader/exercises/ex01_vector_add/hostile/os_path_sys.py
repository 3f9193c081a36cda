"""Hostile submission, exercise 1 (vector add): `sys.modules` reached through `os.path`.

`os` is allowed for the environment and paths; `os.path` is a module that imported `sys`.
"""

import os
import torch
import triton
import triton.language as tl

ATTACK = ("reaches sys.modules through os.path.sys, takes torch.utils._python_dispatch out of it and "
          "computes the answer with torch inside its _disable_current_modes(), then launches a kernel that "
          "does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("os.path.sys",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`os.path.sys` (a way to the module `sys`); in `grade exercise` a warning, and the torch-op watch "
               "where the work is not hidden from it")


_modes = os.path.sys.modules["torch.utils._python" + "_dispatch"]
_quiet = getattr(_modes, "_disable" + "_current_modes")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is already in
    # `out` by then.
    pid = tl.program_id(0)


def add(x, y):
    out = torch.empty_like(x)
    with _quiet():
        out.copy_(x + y)
    noop_kernel[(1,)](out)
    return out
