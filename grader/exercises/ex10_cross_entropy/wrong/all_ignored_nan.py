"""Wrong: the sum of the row losses is divided by count at the end, and count may be 0: a batch whose
rows are all ignored gives 0 / 0 = NaN. Right whenever one row counts."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'every row of this batch is ignored, so count = 0'
SELECT = 'ignored_rows and all_ignored-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("tl.store(row_loss_ptr + row, (lse - x_target) * inv_count)", "tl.store(row_loss_ptr + row, lse - x_target)"),
    ("    n_rows,  # T\n    BLOCK: tl.constexpr,  # row losses",
     "    n_rows,  # T\n    count_ptr,\n    BLOCK: tl.constexpr,  # row losses"),
    ("tl.store(loss_ptr, tl.sum(total, axis=0))",
     "tl.store(loss_ptr, tl.sum(total, axis=0) / tl.load(count_ptr).to(tl.float32))  # WRONG: count = 0: 0 / 0"),
    ("sum_kernel[(1,)](loss, row_loss, n_rows, BLOCK=ROWS_BLOCK)",
     "sum_kernel[(1,)](loss, row_loss, n_rows, count, BLOCK=ROWS_BLOCK)"),
)
cross_entropy = _wrong.cross_entropy
