# -*- coding: latin-1 -*-
"""Robustness (exercise 1): a correct file saved in latin-1, with a PEP 263 coding line.

Legal Python: the first line declares the encoding, and this comment's café is one byte. Today
`grade exercise` (Python's own import) accepts it, while `grade batch` reads every file as
UTF-8 and rejects it before grading: "is not UTF-8 text".
"""

import torch
import triton
import triton.language as tl

ATTACK = "a correct kernel in a file saved in latin-1 with a PEP 263 coding line and a non-ASCII comment (café)"
KIND = "robustness"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = "not rejected: it passes in `grade batch` as in `grade exercise` (Python's own source decoding)"
#: What today's grader does wrong (checked by run_today.py), and how long to give it.
TODAY = "batch_rejects"
WALL_SECONDS = 200


# Une addition de vecteurs, déjà corrigée : l'été dernier.
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
