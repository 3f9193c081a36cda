"""Hostile submission, exercise 1 (vector add): the watch switched off through `object.__subclasses__()`.

Every class of the process is reachable from ``object``: the grader's dispatch mode among them,
found by its name, without importing the grader.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("walks object.__subclasses__() to the torch-op watch's dispatch-mode class, replaces its __torch_dispatch__ "
          "with one that records nothing, computes the answer with torch, then launches a kernel that does nothing")
KIND = "patch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("__subclasses__",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`.__subclasses__` (dynamic attribute access); in `grade exercise` the learner's process can patch "
               "only its own watch: a best effort, said so in docs/grading.md")


def _classes(root=object):
    for sub in root.__subclasses__():
        yield sub
        yield from _classes(sub)


def _record_nothing(self, func, types, args=(), kwargs=None):
    return func(*args, **(kwargs or {}))


for _cls in list(_classes()):
    if "__torch_dispatch__" in vars(_cls) and _cls.__module__.startswith("grader"):
        _cls.__torch_dispatch__ = _record_nothing


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran".
    pid = tl.program_id(0)


def add(x, y):
    out = torch.empty_like(x)
    out.copy_(x + y)
    noop_kernel[(1,)](out)
    return out
