"""Wrong: the statistics are computed in the input's dtype (no `.to(tl.float32)` after the load).

In float16 the squares and their sum overflow past 65504: a row of 257 values of magnitude ~24
sums to about 1.5e5, so mean(x²) is inf, rstd = 0 and y = 0 on that row. (In bfloat16 nothing
overflows, but the sum keeps 8 significant bits: the error grows with the row.)
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the statistics look computed in float16"
SELECT = "forward_large_values and fp16"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("    ).to(tl.float32)\n    # The statistics in float32",
     "    )  # WRONG: x stays in its dtype\n    # The statistics in float32"),
    ("mean_square = tl.sum(x * x, axis=1) / n_cols", "mean_square = (tl.sum(x * x, axis=1) / n_cols).to(tl.float32)"),
)
rmsnorm_forward = _wrong.rmsnorm_forward
