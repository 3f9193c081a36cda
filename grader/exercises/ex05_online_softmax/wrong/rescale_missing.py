"""Wrong: the running sum is never rescaled. `d += sum(exp(x - m_new))` without the factor
exp(m_old - m_new): right only while the max never changes after the first block. A max that
arrives late (the +80 spike in the last block) leaves the old terms e^76 too large."""

from grader.exercises._shared.variants import solution_with
from solutions.ex05_online_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the running sum was not rescaled when the max changed"
SELECT = "late_spike and fp32"


_wrong = solution_with(
    "ex05_online_softmax",
    ("d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)",
     "d = d + tl.sum(tl.exp(x - m_ref), axis=0)  # WRONG: no d * exp(m - m_new)"),
)
softmax_online = _wrong.softmax_online
