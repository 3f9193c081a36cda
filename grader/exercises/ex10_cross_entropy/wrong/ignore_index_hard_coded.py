"""Wrong: the kernel compares targets with -100, not with the ignore_index argument. Right for the
default; with ignore_index = 3, rows whose target is 3 are counted as class 3."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'the `ignore_index` argument was not used'
SELECT = 'ignored_rows and custom_index'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("count_kernel[(1,)](count, target, n_rows, ignore_index, BLOCK=ROWS_BLOCK)",
     "count_kernel[(1,)](count, target, n_rows, -100, BLOCK=ROWS_BLOCK)  # WRONG: -100, whatever ignore_index is"),
    ("logits, logits.stride(0), target, row_loss, count, n_cols, ignore_index,",
     "logits, logits.stride(0), target, row_loss, count, n_cols, -100,"),
)
cross_entropy = _wrong.cross_entropy
