"""Wrong: the output is addressed with x's row stride.

`out = torch.empty_like(x)` is contiguous even when x is a column slice, so its rows are n_cols
apart, not x.stride(0): the stores run past the end of `out`. Contiguous inputs pass.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "ignores the row stride of `out`"
SELECT = "strided_rows and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ("out_ptr + row * out_row_stride + cols", "out_ptr + row * x_row_stride + cols"),  # WRONG: x's stride
)
softmax = _wrong.softmax
