"""Wrong (for speed): the backward runs one program per row, so the partial buffer has M rows of
N float32: at 16384 x 4096 bf16 that is 268 MB written and read back, as much as x itself, for a
reduction that needs only enough programs to fill the GPU (a few hundred rows of partials)."""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "your backward launched one program per row"
SELECT = "backward_grid and many_rows"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("n_partials = partial_count(n_rows, num_sms, PROGRAMS_PER_SM)",
     "n_partials = n_rows  # WRONG: one program, and one row of partial sums, per row of x"),
)
rmsnorm_backward = _wrong.rmsnorm_backward
