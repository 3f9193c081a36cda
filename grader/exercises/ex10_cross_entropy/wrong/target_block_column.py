"""Wrong: the target is compared with the block's lane numbers (`cols == target`), not with the
row's column numbers (`start + cols == target`), in both passes. A target past the first block is
never found (its logit counts as 0 and its -1 is missing); one inside it is found in every block."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'the target was looked up as a column of the block instead of the row'
SELECT = 'targets_at_block_edges and fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("x_target += tl.sum(tl.where(start + cols == target, x, 0.0), axis=0)",
     "x_target += tl.sum(tl.where(cols == target, x, 0.0), axis=0)  # WRONG: the block's lane, not the column"),
    ("grad = tl.where(start + cols == target, p - 1.0, p) * inv_count",
     "grad = tl.where(cols == target, p - 1.0, p) * inv_count"),
)
cross_entropy = _wrong.cross_entropy
