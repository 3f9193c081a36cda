"""Hostile submission, exercise 7 (FlashAttention forward): forged events, then exit.

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
          "on the child's command line, then os._exit(0) at import; a kernel that stores zeros underneath")
KIND = "forge"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys.argv / /proc/self/cmdline", "os._exit")
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong (a kernel that stores zeros); "
               "nothing the learner's process does reaches the judge (the learner's process sends outputs, never "
               "verdicts; an exit before any output is a sentence, not a pass)")


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


MAIN = ["B1-H1-S1-D16", "B1-H1-S1-D16-causal", "B2-H3-S17-D32", "B2-H3-S17-D32-causal", "B1-H2-S97-D64",
        "B1-H2-S97-D64-causal", "B2-H1-S130-D128", "B2-H1-S130-D128-causal", "B1-H2-S65-D16-causal"]
CHECKS = ([f"matches_reference[{c}]" for c in MAIN]
          + ["sm_scale[B1-H2-S50-D64-causal-scale0.3]", "sm_scale[B2-H1-S33-D32-scale0.05]",
             "cross_attention[B1-H2-Sq40-Sk97-D32]", "cross_attention[B2-H1-Sq33-Sk1-D16]",
             "key_lens[B3-H2-S70-D32-lens0_33_70]", "key_lens[B3-H2-S70-D64-causal-lens70_0_1]",
             "strided_inputs[B2-H2-S40-D32-causal-bshd]", "masked_keys_ignored[B2-H2-S80-D32-lens37_61]",
             "masked_keys_ignored[B2-H2-S80-D32-causal-lens61_37]", "running_max_changes"]
          + [f"long_sequences[long{i}]" for i in range(5)]
          + [f"bf16[{c}]" for c in ("B2-H3-S17-D32-causal", "B1-H2-S130-D128", "B3-H2-S70-D64-causal-lens70_0_1",
                                    "B1-H2-S1000-D64-causal", "B1-H2-S1000-D16")]
          + ["no_score_matrix", "performance"])
SPEC = "grader/exercises/ex07_flash_attention/spec.py"


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


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    zeros_kernel[(B * H * S,)](out, H, S, *out.stride(), D=D)
    return out
