"""Wrong: row r of x is looked for at r * n_cols, not r * x.stride(0). Right for contiguous x;
when x is a view with gaps between its rows, the kernel reads the gaps (and the wrong rows)."""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "read the gaps between the rows of `x`"
SELECT = "forward_strided and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("x_ptr + rows[:, None] * x_row_stride + cols[None, :]", "x_ptr + rows[:, None] * n_cols + cols[None, :]  # WRONG"),
)
rmsnorm_forward = _wrong.rmsnorm_forward
