"""Hostile submission, exercise 1 (vector add): `torch._C` through a module kept in a list.

A module held in a container is no longer a name a check can follow.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("keeps torch in a list and computes the answer with torch inside "
          "_mods[0]._C._DisableTorchDispatch(), then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("a module as a value",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `[torch]` "
               "(a module passed around as a value) and `._C`; in `grade exercise` a warning, and the torch-op "
               "watch where the work is not hidden from it")


_mods = [torch]
_quiet = _mods[0]._C._DisableTorchDispatch


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
