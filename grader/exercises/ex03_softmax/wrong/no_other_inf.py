"""Wrong: the row's load has a mask but no `other=-float("inf")`, so masked lanes load 0.

Each of the BLOCK - n_cols padding lanes then adds exp(0 - max) to the row sum, and every output
of the row comes out too small (for 781 columns in a 1024-wide block, about 16% too small).
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "masked lanes were loaded as 0, not -inf"
SELECT = "matches_reference and n781 and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ('mask=mask, other=-float("inf"))', "mask=mask)  # WRONG: masked lanes load 0"),
)
softmax = _wrong.softmax
