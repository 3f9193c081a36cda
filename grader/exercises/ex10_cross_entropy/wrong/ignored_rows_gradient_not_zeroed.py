"""Wrong: ignored rows go through both passes like the others; their loss is scaled by 0 but their
gradient is softmax / count (the target -100 matches no column), not zero."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'the gradient of ignored rows must be exactly zero'
SELECT = 'ignored_rows and quarter-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("    if target == ignore_index:",
     "    if False:  # WRONG: no branch for an ignored row: its gradient is computed like the others'"),
    ("tl.store(row_loss_ptr + row, (lse - x_target) * inv_count)",
     "counted = tl.where(target == ignore_index, 0.0, 1.0)  # its loss is left out\n"
     "        tl.store(row_loss_ptr + row, (lse - x_target) * inv_count * counted)"),
)
cross_entropy = _wrong.cross_entropy
