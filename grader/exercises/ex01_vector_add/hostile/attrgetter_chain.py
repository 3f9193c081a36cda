"""Hostile submission, exercise 1 (vector add): `torch._C` through `operator.attrgetter`.

`attrgetter` reads a dotted chain of attributes named by a string.
"""

import operator
import torch
import triton
import triton.language as tl

ATTACK = ("reads torch._C._DisableTorchDispatch with operator.attrgetter of a concatenated string and "
          "computes the answer with torch inside it, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("operator.attrgetter",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`operator.attrgetter` (dynamic attribute access); in `grade exercise` a warning, and the torch-op "
               "watch where the work is not hidden from it")


_quiet = operator.attrgetter("_C._Disable" + "TorchDispatch")(torch)


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
