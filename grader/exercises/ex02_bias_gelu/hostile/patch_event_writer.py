"""Hostile submission, exercise 2 (bias + GELU): every result rewritten as passed.

The checks still fail inside the child, but the verdict the parent reads is whatever the child
writes, and the learner's code runs in the child. A passed result is also written as each check
starts, so the parent never sees one running (none can time out).
"""

import torch
import triton
import triton.language as tl

ATTACK = ("wraps grader.judge.plugin's event writer so that every result it sends the parent says passed, "
          "over a kernel that adds the bias after the GELU")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that adds the bias after "
               "the GELU); nothing the learner's process does reaches the judge")


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
