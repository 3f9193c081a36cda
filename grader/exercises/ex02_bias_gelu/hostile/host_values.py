"""Hostile submission, exercise 2 (bias + GELU): the work on host values.

Neither .tolist(), torch.tensor(list) nor assigning .data is an op the grader's dispatch mode sees
(.item() is).
"""

import math

import torch
import triton
import triton.language as tl

ATTACK = ("computes the answer on host values from .tolist() and puts them into the empty output with "
          "`out.data = torch.tensor(...)`, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = (".tolist()", ".data =")
REJECTED_BY = ("best effort: the batch static check rejects `.tolist()` on inputs; the judge's comparison passes "
               "(the numbers are right, only their origin is wrong)")


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


def _host_answer(x, bias):
    """GELU on Python floats: .tolist() is not an op the grader's watch sees."""
    b = bias.tolist()

    def gelu(z):
        return 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0)))

    return [[gelu(v + c) for v, c in zip(row, b)] for row in x.tolist()]


def bias_gelu(x, bias):
    out = torch.empty_like(x)
    out.data = torch.tensor(_host_answer(x, bias), dtype=x.dtype, device=x.device)
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out


# --- the byte model (right: the attack is about the kernel) --------------------------------

def fused_bytes(m, n, element_size):
    return (2 * m * n + n) * element_size


def unfused_bytes(m, n, element_size):
    return (4 * m * n + n) * element_size
