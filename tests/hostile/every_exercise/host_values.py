"""Hostile submission: the work on host values.

Neither .tolist(), torch.tensor(list) nor assigning .data is an op the grader's dispatch mode sees
(.item() is).
"""

import numpy as np
import torch

ATTACK = ("computes the answer on host values from .tolist() and puts them into the empty output with "
          "`out.data = torch.tensor(...)`, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = (".tolist()", ".data =")
REJECTED_BY = ("best effort: the batch static check rejects `.tolist()` on inputs; the judge's comparison passes "
               "(the numbers are right, only their origin is wrong)")


def _host(value):
    """A tensor's values as a float64 array built from Python floats: .tolist() is not an op the watch sees."""
    return np.array(value.tolist(), dtype=np.float64) if isinstance(value, torch.Tensor) else value


def graded_function(*inputs, **options):
    out = empty_output(*inputs)
    with np.errstate(all="ignore"):
        values = numpy_answer(np, *map(_host, inputs), **{name: _host(value) for name, value in options.items()})
    out.data = torch.tensor(values.tolist(), dtype=out.dtype, device=out.device)
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
