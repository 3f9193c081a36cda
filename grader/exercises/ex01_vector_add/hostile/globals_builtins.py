"""Hostile submission, exercise 1 (vector add): `exec` read from `globals()['__builtins__']`.

A module's globals hold its builtins under `__builtins__`: a module or a dictionary.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("reads exec out of globals()['__builtins__'] by a concatenated key, runs a string that fetches "
          "torch._C._DisableTorchDispatch and computes the answer inside it, then launches a kernel that "
          "does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("globals",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`globals()`; in `grade exercise` a warning, and the torch-op watch where the work is not hidden "
               "from it")


_builtins = globals()["__" + "builtins__"]
_run = _builtins["ex" + "ec"] if isinstance(_builtins, dict) else vars(_builtins)["ex" + "ec"]
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
