"""Hostile submission, exercise 1 (vector add): `sys.modules` reached through `torch`.

`torch` is allowed; its package imported `sys`, which a chain through it reaches.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("takes torch._C out of torch.sys.modules by a concatenated key and computes the answer with torch "
          "inside its _DisableTorchDispatch(), then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("torch.sys",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `torch.sys` "
               "(a way to the module `sys`); in `grade exercise` a warning, and the torch-op watch where the work "
               "is not hidden from it")


_c = torch.sys.modules["torch." + "_C"]
_quiet = getattr(_c, "_Disable" + "TorchDispatch")


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
