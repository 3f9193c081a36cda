"""Wrong: no guard for a block of only -inf. While the running max is still -inf,
exp(m - m_new) = exp(-inf - (-inf)) is NaN, and NaN * 0 is NaN: a row that starts with a masked
block (as in causal attention) comes out all NaN."""

from grader.exercises._shared.variants import solution_with
from solutions.ex05_online_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "a block whose entries are all -inf gave NaN"
SELECT = "leading_inf and fp32"


_wrong = solution_with(
    "ex05_online_softmax",
    ('m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)',
     "m_ref = m_new  # WRONG: no guard for a block of only -inf"),
)
softmax_online = _wrong.softmax_online
