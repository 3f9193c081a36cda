"""Wrong: pass 2 stores whole blocks, without the mask: the last block of a row writes past V, into
the next row (before that row is read) and, from the last row, past the end of the logits."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'past the end of `logits`'
SELECT = 'matches_reference and 3x24581-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("x_row + start + cols, grad.to(logits_ptr.dtype.element_ty), mask=mask",
     "x_row + start + cols, grad.to(logits_ptr.dtype.element_ty)  # WRONG: no mask"),
)
cross_entropy = _wrong.cross_entropy
