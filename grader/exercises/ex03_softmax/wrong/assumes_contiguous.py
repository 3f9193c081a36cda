"""Wrong: rows are addressed as row * n_cols, which is right only when the rows are contiguous.

For a column slice of a wider tensor (x.stride(0) > n_cols) rows 1, 2, ... are read from the
wrong place, partly from the gaps between rows. Contiguous inputs pass, so only the strided
check catches it.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "ignores the row stride"
SELECT = "strided_rows and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ("x_ptr + row * x_row_stride + cols", "x_ptr + row * n_cols + cols"),  # WRONG: n_cols, not the stride
)
softmax = _wrong.softmax
