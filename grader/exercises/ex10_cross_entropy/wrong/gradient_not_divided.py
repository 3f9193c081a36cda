"""Wrong: the gradient is softmax - one_hot, not divided by count (the gradient of a sum, not of the
mean). The loss is right."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'the gradient was not divided by count'
SELECT = 'matches_reference and 6x781-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("grad = tl.where(start + cols == target, p - 1.0, p) * inv_count",
     "grad = tl.where(start + cols == target, p - 1.0, p)  # WRONG: not divided by count"),
)
cross_entropy = _wrong.cross_entropy
