"""Hostile submission, exercise 2 (bias + GELU): forged events, then exit.

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
          "on the child's command line, then os._exit(0) at import; a kernel that adds the bias after the "
          "GELU underneath")
KIND = "forge"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys.argv / /proc/self/cmdline", "os._exit")
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that adds the bias after "
               "the GELU); nothing the learner's process does reaches the judge (the learner's process sends "
               "outputs, never verdicts; an exit before any output is a sentence, not a pass)")


@triton.jit
def gelu_then_bias_kernel(x_ptr, bias_ptr, out_ptr, n_elements, N, x_row_stride, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    row = offsets // N
    col = offsets % N
    x = tl.load(x_ptr + row * x_row_stride + col, mask=mask).to(tl.float32)
    b = tl.load(bias_ptr + col, mask=mask).to(tl.float32)
    # WRONG on purpose: gelu(x) + bias, not gelu(x + bias). Only a forged verdict passes it.
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offsets, (g + b).to(out_ptr.dtype.element_ty), mask=mask)


SHAPES = ["1x1", "1x3", "3x1", "2x2", "3x127", "127x3", "4x1023", "5x1025", "7x129", "2x4097"]
DTYPES = ("fp32", "fp16", "bf16")
CHECKS = ([f"matches_reference[{s}-{d}]" for s in SHAPES for d in DTYPES]
          + ["extreme_shapes[4097x3]", "extreme_shapes[1x16411]"]
          + [f"strided_rows[{c}-{d}]" for c in ("5x127-stride131", "3x1025-stride1040", "127x3-stride8")
             for d in DTYPES]
          + [f"bias_broadcast[{s}]" for s in ("64x5", "5x64", "17x33")]
          + [f"large_magnitudes[{d}]" for d in DTYPES]
          + [f"byte_model[{c}]" for c in ("16384x4096-fp32", "127x4097-fp16", "4097x3-bf16", "1x1-fp32",
                                          "3x1-fp16")]
          + ["traffic", "performance"])
SPEC = "grader/exercises/ex02_bias_gelu/spec.py"


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


def bias_gelu(x, bias):
    M, N = x.shape
    out = torch.empty_like(x)  # contiguous (empty_like of a view with gaps is contiguous)
    n = M * N
    gelu_then_bias_kernel[(triton.cdiv(n, 1024),)](x, bias, out, n, N, x.stride(0), BLOCK=1024)
    return out


# --- the byte model (right: the attack is about the kernel) --------------------------------

def fused_bytes(m, n, element_size):
    return (2 * m * n + n) * element_size


def unfused_bytes(m, n, element_size):
    return (4 * m * n + n) * element_size
