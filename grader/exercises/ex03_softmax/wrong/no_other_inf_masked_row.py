"""Wrong: the row's load has a mask but no `other=-float("inf")`, so masked lanes load 0 — seen
on a row that is entirely -inf.

torch.softmax gives NaN for such a row (0 / 0). With `other=0.0` the padding lanes' 0 wins the
max, every exp(-inf - 0) is 0 and the row comes out as zeros, which looks like a special case
but is the same mistake that makes every other row too small: the grader must say so.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "This is not a special case: it has the same cause as the other rows"
SELECT = "fully_masked_row"


_wrong = solution_with(
    "ex03_softmax",
    ('mask=mask, other=-float("inf"))', "mask=mask)  # WRONG: masked lanes load 0"),
)
softmax = _wrong.softmax
