"""Hostile submission, exercise 7 (FlashAttention forward): every result rewritten as passed.

The checks still fail inside the child, but the verdict the parent reads is whatever the child
writes, and the learner's code runs in the child. A passed result is also written as each check
starts, so the parent never sees one running (none can time out).
"""

import torch
import triton
import triton.language as tl

ATTACK = ("wraps grader.judge.plugin's event writer so that every result it sends the parent says passed, "
          "over a kernel that stores zeros")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that stores zeros); "
               "nothing the learner's process does reaches the judge")


@triton.jit
def zeros_kernel(out_ptr, H, S, so_b, so_h, so_s, so_d, D: tl.constexpr):
    # WRONG on purpose: one program per (batch, head, row) stores zeros; no attention at all.
    # Only a forged verdict passes it (rows that see no key are the only right ones).
    pid = tl.program_id(0)
    b = pid // (H * S)
    h = (pid // S) % H
    s = pid % S
    d = tl.arange(0, D)
    tl.store(out_ptr + b * so_b + h * so_h + s * so_s + d * so_d,
             tl.zeros((D,), tl.float32).to(out_ptr.dtype.element_ty))


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


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    zeros_kernel[(B * H * S,)](out, H, S, *out.stride(), D=D)
    return out
