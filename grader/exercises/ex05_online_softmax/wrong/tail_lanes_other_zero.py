"""Wrong: the first pass loads the lanes past the end of the row with other=0.0. Each of them
adds exp(0 - m) to the sum (and 0 takes part in the max): a softmax over the row plus k zeros.
On a row of values near -40 the zeros dominate and every output is ~e^-40 / k."""

from grader.exercises._shared.variants import solution_with
from solutions.ex05_online_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "masked tail lanes added to the sum"
SELECT = "all_negative and fp32"


_wrong = solution_with(
    "ex05_online_softmax",
    ('other=float("-inf")).to(tl.float32)\n        m_new = tl.maximum',
     "other=0.0).to(tl.float32)  # WRONG: the tail lanes load 0\n        m_new = tl.maximum"),
)
softmax_online = _wrong.softmax_online
