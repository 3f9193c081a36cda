"""Wrong: the mean divides by T, the number of rows, instead of by count, the rows whose target is
not ignore_index. Right when no row is ignored."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'rows whose target is ignore_index were counted in the mean'
SELECT = 'ignored_rows and quarter-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("inv_count = 1.0 / tl.maximum(tl.load(count_ptr), 1).to(tl.float32)",
     "inv_count = 1.0 / tl.num_programs(0).to(tl.float32)  # WRONG: every row, ignored ones included"),
)
cross_entropy = _wrong.cross_entropy
