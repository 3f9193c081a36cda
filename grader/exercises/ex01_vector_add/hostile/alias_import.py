"""Hostile submission, exercise 1 (vector add): `__import__` read under an alias.

No import statement names the private module: `__import__` is read into a name of the file's own.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("reads __import__ into `_load`, imports torch.utils._python_dispatch through a concatenated name "
          "and computes the answer with torch inside its _disable_current_modes(), then launches a kernel "
          "that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("__import__",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `_load = "
               "__import__` reads `__import__`; in `grade exercise` a warning, and the torch-op watch where the "
               "work is not hidden from it")


_load = __import__
_modes = _load("torch.utils._python" + "_dispatch", fromlist=["_"])
_quiet = _modes.__dict__["_disable" + "_current_modes"]


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
