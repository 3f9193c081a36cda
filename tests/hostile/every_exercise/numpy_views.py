"""Hostile submission: the work in numpy.

numpy reads and writes the tensors' memory directly: no torch op runs at all.
"""

import numpy as np
import torch

ATTACK = ("computes the answer with numpy on the inputs' .numpy() views and writes it through out.numpy(), "
          "then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = (".numpy()",)
REJECTED_BY = ("best effort: the batch static check rejects `.numpy()` on inputs; the judge's comparison passes "
               "(the numbers are right, only their origin is wrong)")


def _np(t):
    """The values of a tensor as a float64 numpy array, without any torch op (bf16 through its bits)."""
    if not isinstance(t, torch.Tensor):
        return t
    if t.dtype == torch.bfloat16:
        bits = t.view(torch.int16).numpy().astype(np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    return t.numpy().astype(np.float64)


def _put(out, values):
    """Write float64 ``values`` into out's memory through numpy, rounded to out's dtype."""
    if out.dtype == torch.bfloat16:
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        out.view(torch.int16).numpy()[...] = rounded.view(np.int16)
    else:
        target = out.numpy()
        target[...] = values.astype(target.dtype)


def graded_function(*inputs, **options):
    out = empty_output(*inputs)
    with np.errstate(all="ignore"):  # a row of -inf gives NaN, as torch does
        values = numpy_answer(np, *map(_np, inputs), **{name: _np(value) for name, value in options.items()})
    _put(out, values)
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
