"""Hostile submission, exercise 1 (vector add): `torch._C` evaluated from an annotation.

`typing.get_type_hints` evaluates string annotations as code, in the function's globals.
"""

import typing
import torch
import triton
import triton.language as tl

ATTACK = ("annotates a parameter with the string 'torch._C._DisableTorchDispatch', has typing.get_type_hints "
          "evaluate it and computes the answer with torch inside it, then launches a kernel that does "
          "nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("typing.get_type_hints",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`typing.get_type_hints` (it evaluates strings as code); in `grade exercise` a warning, and the "
               "torch-op watch where the work is not hidden from it")


def _holder(quiet: "torch._C._DisableTorchDispatch"):
    pass


_quiet = typing.get_type_hints(_holder)["quiet"]


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
