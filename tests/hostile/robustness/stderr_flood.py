"""Robustness (exercise 1): a correct file that writes 2 GiB to stderr.

A print left in a loop. Today the child's stderr goes to a file, and after the child ends the
parent reads the whole file into memory (bytes, then text) to keep its last 4000 characters:
the `grade` process grows by about twice STDERR_BYTES.
"""

import sys

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel, and STDERR_BYTES (2 GiB) written to stderr at import, in 1 MiB chunks"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("its verdict (it passes) with the grade process's memory bounded: stderr is read as a bounded tail "
               "(and RLIMIT_FSIZE bounds the file)")
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "memory"
WALL_SECONDS = 400
#: Bytes written to stderr; a test may shrink it.
STDERR_BYTES = 2 * 2**30
CHUNK = b"x" * (2**20 - 1) + b"\n"

for _ in range(STDERR_BYTES // len(CHUNK)):
    sys.stderr.buffer.write(CHUNK)
sys.stderr.flush()


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
