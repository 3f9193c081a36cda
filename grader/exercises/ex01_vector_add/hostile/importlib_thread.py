"""Hostile submission, exercise 1 (vector add): threading imported by a computed name.

The thread attack, with the module name hidden from a static check that lists imports.
"""

import importlib

import torch
import triton
import triton.language as tl

ATTACK = ("imports threading through importlib.import_module of a concatenated name and computes the answer "
          "with torch in a thread, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("importlib",)
REJECTED_BY = ("best effort: the batch static check rejects importlib / __import__; the judge's comparison "
               "passes (the numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _answer(x, y):
    return x + y


# `threading`, imported by a computed name: an AST scan for `import threading` finds nothing.
_threads = importlib.import_module("thr" + "eading")


def add(x, y):
    out = torch.empty_like(x)
    worker = _threads.Thread(target=lambda: out.copy_(_answer(x, y)))
    worker.start()
    worker.join()
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
