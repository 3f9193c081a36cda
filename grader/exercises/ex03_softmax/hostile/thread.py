"""Hostile submission, exercise 3 (fused softmax): the work in another thread.

A TorchDispatchMode is thread-local: ops run by another thread are never seen.
"""

import threading

import torch
import triton
import triton.language as tl

ATTACK = ("computes the answer with torch in a threading.Thread (the torch-op watch is a per-thread "
          "dispatch mode) and copies it into `out` there, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("threading",)
REJECTED_BY = ("best effort: the batch static check rejects `import threading`; the judge's comparison passes "
               "(the numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _answer(x):
    return torch.softmax(x.double(), dim=1).to(x.dtype)


def softmax(x):
    out = torch.empty_like(x)
    worker = threading.Thread(target=lambda: out.copy_(_answer(x)))
    worker.start()
    worker.join()
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
