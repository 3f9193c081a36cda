"""Hostile submission, exercise 1 (vector add): `exec` bound as a parameter's default.

A default value is read where the function is defined: `exec=exec` binds the builtin to a parameter of the file's own.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("binds the builtin exec as the default of a parameter named exec, runs a string through it that "
          "fetches torch._C._DisableTorchDispatch and computes the answer inside it, then launches a kernel "
          "that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("a builtin's name bound",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `exec=exec` "
               "(binds the name of a builtin); in `grade exercise` a warning, and the torch-op watch where the "
               "work is not hidden from it")


def _fetch(source, exec=exec):
    scope = {"torch": torch}
    exec(source, scope)
    return scope["quiet"]


_quiet = _fetch("quiet = torch." + "_C._Disable" + "TorchDispatch")


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
