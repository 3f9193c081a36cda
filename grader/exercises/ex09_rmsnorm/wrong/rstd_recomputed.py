"""Wrong: the backward ignores the rstd it is given and recomputes it from the 16-bit x, in the
input's dtype, with an eps it had to guess (1e-6).

The forward saved rstd in float32 for exactly this: recomputing costs a second reduction per row,
rounds the statistics to 16 bits, and cannot know the forward's eps (here the grader's forward
used eps = 0.1, on rows where that matters).
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "your backward does not use the rstd it was given"
SELECT = "backward_uses_given_rstd and fp16"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(\n            tl.float32\n        )",
     "x16 = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)\n        x = x16.to(tl.float32)"),
    ("rstd = tl.load(rstd_ptr + row)",
     "rstd = tl.rsqrt((tl.sum(x16 * x16, axis=0) / n_cols).to(tl.float32) + 1e-6)  # WRONG: in 16 bits, eps guessed"),
)
rmsnorm_backward = _wrong.rmsnorm_backward
