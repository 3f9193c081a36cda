"""Wrong: the masked lanes count in the mean: the sum of squares is divided by BLOCK, not n_cols.

The masked lanes load 0, so the sum itself is right; but a 129-column row in a 256-wide block is
divided by 256, and rstd comes out sqrt(256 / 129) = 1.41 times too large.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "divided by the block width 256, not by N = 129"
SELECT = "test_forward and 7x129 and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("mean_square = tl.sum(x * x, axis=1) / n_cols",
     "mean_square = tl.sum(x * x, axis=1) / BLOCK  # WRONG: the row has n_cols elements"),
)
rmsnorm_forward = _wrong.rmsnorm_forward
