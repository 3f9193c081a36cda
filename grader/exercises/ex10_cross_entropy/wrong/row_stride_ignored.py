"""Wrong: row r is taken to start at r * V, as if the rows had no gaps between them. On a padded
vocabulary it reads and writes the gaps."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'into the gaps between the rows of `logits`'
SELECT = 'padded_vocabulary and fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("logits, logits.stride(0), target, row_loss, count, n_cols, ignore_index,",
     "logits, n_cols, target, row_loss, count, n_cols, ignore_index,  # WRONG: n_cols, not the row stride"),
)
cross_entropy = _wrong.cross_entropy
