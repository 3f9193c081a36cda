"""Hostile submission: the work inside _disable_current_modes.

Every dispatch mode on the stack, the grader's included, is popped for the block's duration.
"""

from torch.utils._python_dispatch import _disable_current_modes

ATTACK = ("computes the answer with torch inside torch.utils._python_dispatch._disable_current_modes(), "
          "which pops the grader's dispatch mode, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("torch.utils._python_dispatch (a private torch API)",)
REJECTED_BY = ("best effort: the batch static check rejects private torch dispatch APIs; the judge's comparison "
               "passes (the numbers are right, only their origin is wrong)")


def graded_function(*inputs, **options):
    out = empty_output(*inputs)
    with _disable_current_modes():
        out.copy_(torch_answer(*inputs, **options))
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
