"""Wrong: pass 1 sums exp(x) without subtracting the running max. Right for ordinary logits;
logits above 88.7 overflow float32 and the loss is inf."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'the log-sum-exp overflowed'
SELECT = 'logit_pattern and huge-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("            m_new = tl.maximum(m, tl.max(x, axis=0))\n"
     "            # A block of only -inf logits (a masked vocabulary) keeps m_new = -inf:\n"
     "            # measure against 0 then, or exp(m - m_new) = exp(-inf + inf) is NaN\n"
     "            # (exercise 5).\n"
     '            m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)\n'
     "            d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)\n"
     "            m = m_new\n",
     "            d += tl.sum(tl.exp(x), axis=0)  # WRONG: no running max\n"),
    ("lse = m + tl.log(d)",
     "lse = tl.log(d)"),
)
cross_entropy = _wrong.cross_entropy
