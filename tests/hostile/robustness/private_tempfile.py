"""Robustness (exercise 1): a correct file that keeps notes in a temporary file and reads itself.

At import it writes a line into a `tempfile.NamedTemporaryFile` (the folder `TMPDIR` names) and
reads its own source through `__file__`, as a learner who logs to a scratch file might. The
sandbox gives every run a private temporary folder and its own copy of the file: both must work.
"""

import tempfile

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel; a temporary file written and its own source read at import"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("tempfile", "open()")
REJECTED_BY = "not rejected: it passes (the private TMPDIR is writable and the private copy readable)"
TODAY = "passes"
WALL_SECONDS = 150

with tempfile.NamedTemporaryFile("w", suffix=".log") as _log:
    _log.write("imported\n")
    _log.flush()
with open(__file__, encoding="utf-8") as _source:
    SOURCE_LINES = len(_source.read().splitlines())


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    total = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) + tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
