"""Wrong: exp(x) / sum(exp(x)) without subtracting the row max.

Mathematically the same softmax, and right for ordinary logits; but in float32 exp(x) is
infinite above x = 88.7, so rows with logits of magnitude 1e4 come out as NaN (inf / inf).
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "exp overflowed: subtract the row max first"
SELECT = "extreme_logits and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ("z = x - tl.max(x, axis=0)", "z = x  # WRONG: no max subtraction"),
)
softmax = _wrong.softmax
