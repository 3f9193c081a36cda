"""Wrong: the launcher crashes the process (as a wild store in the interpreter can). The grader
must report the crash as a sentence and still run the other checks in a fresh process."""

import ctypes

import torch

EXPECTED = "segmentation fault"
SELECT = "matches_reference and n3 and fp32"


def add(x, y):
    ctypes.string_at(0)  # reads address 0: SIGSEGV
    return torch.empty_like(x)
