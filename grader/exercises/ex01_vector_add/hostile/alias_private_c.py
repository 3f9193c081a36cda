"""Hostile submission, exercise 1 (vector add): `torch._C` through a plain variable.

A check that looks for `torch._C` by the name `torch` does not see `t._C`.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("binds torch to `t` and computes the answer with torch inside t._C._DisableTorchDispatch(), then "
          "launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("torch._C through an alias",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `t._C` "
               "(private to `torch`, through the alias `t = torch`); in `grade exercise` a warning, and the "
               "torch-op watch where the work is not hidden from it")


t = torch
_quiet = t._C._DisableTorchDispatch


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
