"""Hostile submission, exercise 3 (fused softmax): forged events, then exit.

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
          "on the child's command line, then os._exit(0) at import; a kernel that never divides by the row "
          "sum underneath")
KIND = "forge"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys.argv / /proc/self/cmdline", "os._exit")
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that never divides by the "
               "row sum); nothing the learner's process does reaches the judge (the learner's process sends "
               "outputs, never verdicts; an exit before any output is a sentence, not a pass)")


@triton.jit
def no_division_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    # WRONG on purpose: exp(x - max) is never divided by its sum. Only a forged verdict passes it.
    y = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


DTYPES = ("fp32", "fp16", "bf16")
CHECKS = ([f"matches_reference[n{n}-{d}]" for n in (1, 2, 3, 781, 1823, 4097) for d in DTYPES]
          + ["strided_rows[fp32]", "strided_rows[fp16]", "longest_row[fp32]", "longest_row[bf16]"]
          + [f"extreme_logits[{d}]" for d in DTYPES]
          + ["masked_logits[fp32]", "masked_logits[fp16]", "fully_masked_row", "traffic", "performance"])
SPEC = "grader/exercises/ex03_softmax/spec.py"


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


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    no_division_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols,
                                  BLOCK=triton.next_power_of_2(n_cols))
    return out
