"""Hostile submission, exercise 1 (vector add): the sum computed in a subprocess started through `triton.testing`.

`triton.testing` is allowed (``do_bench``); the module imported `subprocess`.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("starts a Python subprocess through triton.testing.subprocess.run that adds the inputs, passed as text, "
          "outside the learner process's watch; copies the printed sum into out and launches a kernel that does "
          "nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("triton.testing.subprocess",)
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`triton.testing.subprocess` (a way to the module `subprocess`); in `grade exercise` the copy into "
               "`out` is a torch op the watch records")

_SUM = "import sys; a, b = eval(sys.stdin.read()); print([u + v for u, v in zip(a, b)])"


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran".
    pid = tl.program_id(0)


def add(x, y):
    out = torch.empty_like(x)
    given = repr((x.tolist(), y.tolist()))
    done = triton.testing.subprocess.run([triton.testing.sys.executable, "-c", _SUM], input=given,
                                         capture_output=True, text=True)
    values = [float(v) for v in done.stdout.strip().strip("[]").split(",")]
    out.copy_(torch.tensor(values, dtype=out.dtype))
    noop_kernel[(1,)](out)
    return out
