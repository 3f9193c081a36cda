"""Wrong: the masked lanes are guarded in the exponent instead of zeroed before the sum.

The load is right (`other=-inf`), but the learner, worried about `-inf - (-inf) = NaN`, replaced
the masked lanes' exponent by 0: `z = tl.where(mask, x - m, 0.0)`. Then exp(z) = exp(0) = 1 on
every masked lane, and the sum counts each of them once. The exponentials must be zeroed, not
their exponents: `e = tl.where(mask, tl.exp(x - m), 0.0)`.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "masked lanes were not zeroed before the sum"
SELECT = "matches_reference and n781 and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ("z = x - tl.max(x, axis=0)",
     "z = tl.where(mask, x - tl.max(x, axis=0), 0.0)  # WRONG: masked lanes add exp(0) = 1 to the sum"),
)
softmax = _wrong.softmax
