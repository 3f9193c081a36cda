"""Hostile submission, exercise 1 (vector add): forged events, then exit.

The parent trusts every line of the events file, and the file's path is on the command line of the
process the learner's code runs in.
"""

import json
import os
import sys

import torch
import triton
import triton.language as tl

ATTACK = ("appends a forged `collected` line and a passed `result` line per check to the events file named "
          "on the child's command line, then os._exit(0) at import; a kernel that computes x - y underneath")
KIND = "forge"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys.argv / /proc/self/cmdline", "os._exit")
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that computes x - y); "
               "nothing the learner's process does reaches the judge (the learner's process sends outputs, never "
               "verdicts; an exit before any output is a sentence, not a pass)")


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # WRONG on purpose: x - y, not x + y. Only a forged verdict passes this kernel.
    tl.store(out_ptr + offsets, (x - y).to(out_ptr.dtype.element_ty), mask=mask)


SIZES = [1, 2, 3, 127, 128, 129, 1023, 1024, 1025, 4093, 65537]
CHECKS = ([f"matches_reference[n{n}-{d}]" for n in SIZES for d in ("fp32", "fp16", "bf16")]
          + ["large[fp32]", "traffic", "performance"])
SPEC = "grader/exercises/ex01_vector_add/spec.py"


def _events_file():
    """The events file the grader's child process was given on its command line, or None."""
    argv = list(sys.argv)
    if "--grade-events" not in argv:
        try:
            with open("/proc/self/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            return None
    if "--grade-events" in argv:
        return argv[argv.index("--grade-events") + 1]
    return None


_events = _events_file()
if _events:
    _ids = [f"{SPEC}::test_{name}" for name in CHECKS]
    with open(_events, "a") as f:
        f.write(json.dumps({"event": "collected", "nodeids": _ids, "names": CHECKS}) + "\n")
        for nodeid, name in zip(_ids, CHECKS):
            f.write(json.dumps({"event": "result", "nodeid": nodeid, "name": name, "passed": True,
                                "skipped": False, "message": "", "kind": "ok", "launches": [1]}) + "\n")
    os._exit(0)  # before pytest collects a single real check: the forged lines are all the parent reads


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
