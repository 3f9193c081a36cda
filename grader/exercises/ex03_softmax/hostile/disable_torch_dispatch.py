"""Hostile submission, exercise 3 (fused softmax): the work inside _DisableTorchDispatch.

The guard that hides Python dispatch from torch's own internals hides it from the grader too.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("computes the answer with torch inside torch._C._DisableTorchDispatch(), which switches the "
          "grader's dispatch mode off, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("torch._C",)
REJECTED_BY = ("best effort: the batch static check rejects `torch._C`; the judge's comparison passes (the "
               "numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _answer(x):
    return torch.softmax(x.double(), dim=1).to(x.dtype)


def softmax(x):
    out = torch.empty_like(x)
    with torch._C._DisableTorchDispatch():
        out.copy_(_answer(x))
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
