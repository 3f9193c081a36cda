"""Hostile submission, exercise 1 (vector add): `exec` fetched from `__builtins__` by a computed name.

The builtin is looked up by a name built at run time: no `exec` appears in the file.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("fetches exec with getattr(__builtins__, 'ex' + 'ec') (or a subscript, where __builtins__ is a "
          "dict), runs a string that fetches torch._C._DisableTorchDispatch and computes the answer inside "
          "it, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("__builtins__", "getattr with a computed name")
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`__builtins__` and `getattr()` with a computed name; in `grade exercise` a warning, and the "
               "torch-op watch where the work is not hidden from it")


_run = getattr(__builtins__, "ex" + "ec", None) or __builtins__["ex" + "ec"]
_scope = {"torch": torch}
_run("quiet = torch." + "_C._Disable" + "TorchDispatch", _scope)
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
