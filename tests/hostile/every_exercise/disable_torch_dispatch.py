"""Hostile submission: the work inside _DisableTorchDispatch.

The guard that hides Python dispatch from torch's own internals hides it from the grader too.
"""

import torch

ATTACK = ("computes the answer with torch inside torch._C._DisableTorchDispatch(), which switches the "
          "grader's dispatch mode off, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("torch._C",)
REJECTED_BY = ("best effort: the batch static check rejects `torch._C`; the judge's comparison passes (the "
               "numbers are right, only their origin is wrong)")


def graded_function(*inputs, **options):
    out = empty_output(*inputs)
    with torch._C._DisableTorchDispatch():
        out.copy_(torch_answer(*inputs, **options))
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
