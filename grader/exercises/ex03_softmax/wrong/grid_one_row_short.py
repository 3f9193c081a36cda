"""Wrong: the grid has n_rows - 1 programs, so the last row of `out` is never written."""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the grid is one row short"
SELECT = "matches_reference and n781 and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ("softmax_kernel[(n_rows,)](", "softmax_kernel[(n_rows - 1,)](  # WRONG: the last row gets no program"),
)
softmax = _wrong.softmax
