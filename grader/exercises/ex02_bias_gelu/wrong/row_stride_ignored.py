"""Wrong: row r of x is found at r * N, as if x were contiguous; x with gaps between its rows
comes out wrong."""

from grader.exercises._shared.variants import solution_with
from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "look stepped by N"
SELECT = "strided_rows and 5x127 and fp32"


_wrong = solution_with(
    "ex02_bias_gelu",
    ("x_offs = row * x_row_stride + col", "x_offs = row * N + col  # WRONG: as if x were contiguous"),
)
bias_gelu = _wrong.bias_gelu
