"""Hostile submission, exercise 3 (fused softmax): every result rewritten as passed.

The checks still fail inside the child, but the verdict the parent reads is whatever the child
writes, and the learner's code runs in the child. A passed result is also written as each check
starts, so the parent never sees one running (none can time out).
"""

import torch
import triton
import triton.language as tl

ATTACK = ("wraps grader.judge.plugin's event writer so that every result it sends the parent says passed, "
          "over a kernel that never divides by the row sum")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that never divides by the "
               "row sum); nothing the learner's process does reaches the judge")


@triton.jit
def no_division_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    # WRONG on purpose: exp(x - max) is never divided by its sum. Only a forged verdict passes it.
    y = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


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


def softmax(x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    no_division_kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols,
                                  BLOCK=triton.next_power_of_2(n_cols))
    return out
