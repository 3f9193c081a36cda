"""Wrong (for training): dweight is accumulated with tl.atomic_add into a zeroed float32 buffer,
as Triton's layer-norm tutorial does with a lock. Each program adds its running sum when it
finishes; programs finish in an order that changes from run to run, and float32 addition is not
associative, so dweight changes in its last bits between two runs on the same input. (The answer
is right, and in Triton's interpreter, which runs programs one at a time, it is even reproducible:
the traffic counter sees the atomics.)
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "your backward adds with atomics"
SELECT = "dweight_deterministic"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("    tl.store(partial_ptr + pid.to(tl.int64) * n_cols + cols, dw, mask=mask)",
     "    tl.atomic_add(partial_ptr + cols, dw, mask=mask)  # WRONG: the order of the adds is the hardware's"),
    ("partials = torch.empty((n_partials, n_cols), dtype=torch.float32, device=x.device)",
     "partials = torch.zeros((1, n_cols), dtype=torch.float32, device=x.device)  # one row, added into"),
    ("partials, dweight, n_partials, n_cols,", "partials, dweight, 1, n_cols,"),
)
rmsnorm_backward = _wrong.rmsnorm_backward
