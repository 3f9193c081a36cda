"""Wrong: the eps argument is never used, rstd = 1 / sqrt(mean(x²)).

Right on ordinary rows; a padding row of zeros gets rstd = inf and y = 0 * inf = NaN, which then
poisons every gradient that flows through it.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "eps is missing"
SELECT = "forward_eps and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("rstd = tl.rsqrt(mean_square + eps)", "rstd = tl.rsqrt(mean_square)  # WRONG: no eps"),
)
rmsnorm_forward = _wrong.rmsnorm_forward
