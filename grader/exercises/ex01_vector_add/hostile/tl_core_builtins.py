"""Hostile submission, exercise 1 (vector add): `exec` reached through `triton.language.core`.

`triton.language` is allowed; its `core` module imported `builtins`.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("runs a string through tl.core.builtins.exec that fetches torch._C._DisableTorchDispatch, computes "
          "the answer with torch inside it, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("tl.core.builtins",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`tl.core.builtins` (a way to the module `builtins`); in `grade exercise` a warning, and the "
               "torch-op watch where the work is not hidden from it")


_scope = {"torch": torch}
tl.core.builtins.exec("quiet = torch." + "_C._Disable" + "TorchDispatch", _scope)
_quiet = _scope["quiet"]


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
