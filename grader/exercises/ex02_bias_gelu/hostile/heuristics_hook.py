"""Hostile submission, exercise 2 (bias + GELU): the work in a heuristics function.

Triton evaluates heuristics inside `Heuristics.run`, below the grader's launch wrapper.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("does the work inside a @triton.heuristics function, which runs inside the launch where the "
          "grader's watch takes every torch op for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("best effort: nothing a static check can name; the watch must record torch ops of learner "
               "callbacks (heuristics, autotune hooks, pre-run hooks) run during a launch; the judge's "
               "comparison passes (the numbers are right, only their origin is wrong)")


def _answer(x, bias):
    return torch.nn.functional.gelu(x.double() + bias.double()).to(x.dtype)


#: Work to run where the grader's watch does not look (filled by the launcher, emptied by the hook).
_PENDING = []


def _deliver(*args, **kwargs):
    while _PENDING:
        _PENDING.pop()()
    return 1


@triton.heuristics({"DELIVERED": _deliver})
@triton.jit
def hooked_kernel(out_ptr, DELIVERED: tl.constexpr):
    pid = tl.program_id(0)


def bias_gelu(x, bias):
    out = torch.empty_like(x)
    _PENDING.append(lambda: out.copy_(_answer(x, bias)))
    hooked_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out


# --- the byte model (right: the attack is about the kernel) --------------------------------

def fused_bytes(m, n, element_size):
    return (2 * m * n + n) * element_size


def unfused_bytes(m, n, element_size):
    return (4 * m * n + n) * element_size
