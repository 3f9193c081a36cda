"""Hostile submission, exercise 1 (vector add): every result rewritten as passed.

The checks still fail inside the child, but the verdict the parent reads is whatever the child
writes, and the learner's code runs in the child. A passed result is also written as each check
starts, so the parent never sees one running (none can time out).
"""

import torch
import triton
import triton.language as tl

ATTACK = ("wraps grader.judge.plugin's event writer so that every result it sends the parent says passed, "
          "over a kernel that computes x - y")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that computes x - y); "
               "nothing the learner's process does reaches the judge")


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # WRONG on purpose: x - y, not x + y. Only a forged verdict passes this kernel.
    tl.store(out_ptr + offsets, (x - y).to(out_ptr.dtype.element_ty), mask=mask)


try:
    import grader.judge.plugin as _plugin

    _write = _plugin._events.write

    def _always_passed(**event):
        # Every result line the plugin writes for the parent process now says "passed" ...
        if event.get("event") == "result" and not event.get("skipped"):
            event.update(passed=True, message="", kind="ok")
        _write(**event)
        # ... and a passed result follows every "start" at once, so no check can time out either
        # (the parent writes its own verdict for a check that runs past its timeout).
        if event.get("event") == "start":
            nodeid = event["nodeid"]
            name = nodeid.split("::")[-1].removeprefix("test_")
            _write(event="result", nodeid=nodeid, name=name, passed=True, skipped=False, message="",
                   kind="ok", launches=[1])

    _plugin._events.write = _always_passed
except (ImportError, AttributeError):
    pass


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
