"""Wrong: eps is added after the square root, rstd = 1 / (sqrt(mean(x²)) + eps).

On ordinary rows the two agree to a millionth; on a row whose mean of squares is as small as eps
(a padding row of zeros, rows of tiny activations) they do not: for a row of zeros the right rstd
is 1 / sqrt(eps) = 316 (eps = 1e-5), this one 1 / eps = 100000.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "eps is added outside the square root"
SELECT = "forward_eps and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("rstd = tl.rsqrt(mean_square + eps)",
     "rstd = 1.0 / (tl.sqrt(mean_square) + eps)  # WRONG: eps belongs inside the square root"),
)
rmsnorm_forward = _wrong.rmsnorm_forward
