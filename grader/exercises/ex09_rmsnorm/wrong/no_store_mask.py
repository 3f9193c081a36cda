"""Wrong: the store of y has no mask. Every program writes its whole block, so the last row's
padding lanes land past the end of `y` (and the others' in the next row, which is overwritten
later only by luck of the order)."""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "past the end of `y`"
SELECT = "test_forward and 7x129 and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("        y.to(y_ptr.dtype.element_ty),\n        mask=mask,",
     "        y.to(y_ptr.dtype.element_ty),  # WRONG: no mask"),
)
rmsnorm_forward = _wrong.rmsnorm_forward
