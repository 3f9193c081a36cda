"""Hostile submission, exercise 1 (vector add): `eval` read under an alias.

No call of `eval` appears in the file: the builtin is read into a name of the file's own first.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("reads the builtin eval into `_eval`, evaluates a concatenated string to "
          "torch._C._DisableTorchDispatch and computes the answer with torch inside it, then launches a "
          "kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("alias of eval",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `_eval = "
               "eval` reads the builtin `eval`; in `grade exercise` a warning, and the torch-op watch where the "
               "work is not hidden from it")


_eval = eval
_quiet = _eval("torch." + "_C._Disable" + "TorchDispatch")


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
