"""Wrong: dx = rstd · dy · w, as if rstd were a constant. But rstd depends on every element of
the row: d rstd / d x_j = -rstd³ · x_j / N, which adds -x̂ · mean(x̂ · dy · w) inside the bracket.
dweight is right."""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "dx is missing the term through rstd"
SELECT = "test_backward and 37x129 and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("dx = (g - x_hat * c) * rstd", "dx = g * rstd  # WRONG: the gradient through rstd is missing"),
)
rmsnorm_backward = _wrong.rmsnorm_backward
