"""Hostile submission, exercise 1 (vector add): `exec` read from `vars(builtins)`.

The builtins module's namespace is a dictionary: `exec` is one of its keys, built at run time.
"""

import builtins as _b
import torch
import triton
import triton.language as tl

ATTACK = ("reads exec out of vars(builtins) by a concatenated key, runs a string that fetches "
          "torch._C._DisableTorchDispatch and computes the answer inside it, then launches a kernel that "
          "does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("vars", "builtins")
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `vars()` "
               "and `import builtins`; in `grade exercise` a warning, and the torch-op watch where the work is "
               "not hidden from it")


_run = vars(_b)["ex" + "ec"]
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
