"""Hostile submission, exercise 1 (vector add): forged events from inside a check.

The same forgery as forge_events, done from inside the first check with the grader's own node ids,
so the forged verdict matches the real collection exactly.
"""

import json
import os
import sys

import torch
import triton
import triton.language as tl

ATTACK = ("on its first call, reads the real `collected` line from the events file, appends a passed "
          "`result` for every collected check, then os._exit(0); a kernel that computes x - y underneath")
KIND = "forge"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys.argv / /proc/self/cmdline", "os._exit")
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that computes x - y); "
               "nothing the learner's process does reaches the judge (the learner's process sends outputs, never "
               "verdicts)")


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # WRONG on purpose: x - y, not x + y. Only a forged verdict passes this kernel.
    tl.store(out_ptr + offsets, (x - y).to(out_ptr.dtype.element_ty), mask=mask)


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


def add(x, y):
    path = _events_file()
    if path:
        # The real list of checks is already in the file: answer every one of them.
        with open(path) as f:
            events = [json.loads(line) for line in f if line.strip()]
        collected = [e for e in events if e.get("event") == "collected"][-1]
        with open(path, "a") as f:
            for nodeid, name in zip(collected["nodeids"], collected["names"]):
                f.write(json.dumps({"event": "result", "nodeid": nodeid, "name": name, "passed": True,
                                    "skipped": False, "message": "", "kind": "ok", "launches": [1]}) + "\n")
        os._exit(0)
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
