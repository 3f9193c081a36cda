"""Hostile submission, exercise 1 (vector add): the function defined by exec of a string.

A static check that looks for `torch._C` in the AST finds nothing: the attribute is in a string. It
must reject exec itself.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("defines the function by exec() of a string whose body computes the answer with torch inside "
          "torch._C._DisableTorchDispatch(), then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("exec",)
REJECTED_BY = ("best effort: the batch static check rejects exec/eval/compile of strings; the judge's comparison "
               "passes (the numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _answer(x, y):
    return x + y


_SOURCE = '''
def add(x, y):
    out = torch.empty_like(x)
    with getattr(torch, "_" + "C")._DisableTorchDispatch():
        out.copy_(_answer(x, y))
    noop_kernel[(1,)](out)
    return out
'''

# The function is defined by a string: no import, attribute or call in it is in this file's AST.
exec(_SOURCE)
