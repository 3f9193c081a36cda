"""Hostile submission, exercise 1 (vector add): the work in an autotune pre-hook.

The autotuner calls a config's pre_hook inside `Autotuner.run`, below the launch wrapper.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("does the work in a triton.Config pre_hook of a one-config @triton.autotune, which runs inside "
          "the launch where the grader's watch takes every torch op for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("best effort: nothing a static check can name; the watch must record torch ops of learner "
               "callbacks run during a launch; the judge's comparison passes (the numbers are right, only their "
               "origin is wrong)")


def _answer(x, y):
    return x + y


#: Work to run where the grader's watch does not look (filled by the launcher, emptied by the hook).
_PENDING = []


def _deliver(*args, **kwargs):
    while _PENDING:
        _PENDING.pop()()
    return 1


@triton.autotune(configs=[triton.Config({}, pre_hook=_deliver)], key=[])
@triton.jit
def hooked_kernel(out_ptr):
    pid = tl.program_id(0)


def add(x, y):
    out = torch.empty_like(x)
    _PENDING.append(lambda: out.copy_(_answer(x, y)))
    hooked_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
