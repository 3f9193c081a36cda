"""Wrong: pass 1 is split in two, a loop for the max and a loop for the sum (the safe softmax of
exercise 3, on rows that do not fit): three reads of every row and one write. The answer is right."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'your kernel read `logits` 3.00 times'
SELECT = 'traffic'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("            m_new = tl.maximum(m, tl.max(x, axis=0))\n"
     "            # A block of only -inf logits (a masked vocabulary) keeps m_new = -inf:\n"
     "            # measure against 0 then, or exp(m - m_new) = exp(-inf + inf) is NaN\n"
     "            # (exercise 5).\n"
     '            m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)\n'
     "            d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)\n"
     "            m = m_new\n",
     "            m = tl.maximum(m, tl.max(x, axis=0))\n"),
    ("        # log(sum_j exp(x_j)) = m + log",
     "        m_ref = tl.where(m == float('-inf'), 0.0, m)\n"
     "        start = 0\n"
     "        while start < n_cols:  # WRONG (for speed): a pass of its own for the sum\n"
     "            x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float('-inf')).to(tl.float32)\n"
     "            d += tl.sum(tl.exp(x - m_ref), axis=0)\n"
     "            start += BLOCK\n"
     "        # log(sum_j exp(x_j)) = m + log"),
)
cross_entropy = _wrong.cross_entropy
