"""Wrong (by this course's contract): a row that is entirely -inf is special-cased to zeros.

torch.softmax returns NaN for such a row (0 / 0), and so does a kernel that just subtracts the
row max; the course follows torch. Every other row is right.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "follows torch.softmax, which returns NaN for such a row"
SELECT = "fully_masked_row"


_wrong = solution_with(
    "ex03_softmax",
    ("z = x - tl.max(x, axis=0)",
     "m = tl.max(x, axis=0)\n"
     "    m = tl.where(m == -float('inf'), 0.0, m)  # WRONG by the contract: an all -inf row becomes zeros\n"
     "    z = x - m"),
    ("y = numerator / denominator", "y = numerator / tl.where(denominator == 0.0, 1.0, denominator)"),
)
softmax = _wrong.softmax
