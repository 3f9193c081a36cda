"""Wrong (for speed): keeps the max in registers but reads the row a second time for the
output. Right answer, 1.50x the minimum bytes: the grader counts 2 reads of `x`."""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "read `x` 2.00 times"
SELECT = "traffic"


_wrong = solution_with(
    "ex03_softmax",
    ("y = numerator / denominator",
     "again = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float('inf')).to(tl.float32)\n"
     "    y = tl.exp(again - tl.max(x, axis=0)) / denominator  # WRONG (for speed): the row read a second time"),
)
softmax = _wrong.softmax
