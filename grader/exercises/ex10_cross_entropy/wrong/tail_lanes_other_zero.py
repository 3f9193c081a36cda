"""Wrong: pass 1 loads the lanes past V with other=0.0. Each adds exp(0 - m) to the sum, and 0 takes
part in the max: on logits near -40 the padding outweighs the whole row."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'the lanes past the end of the row (the mask past V) were added to the sum'
SELECT = 'logit_pattern and all_negative-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ('x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(\n'
     "                tl.float32\n"
     "            )\n"
     "            m_new",
     "x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)  # WRONG: the tail lanes are 0\n"
     "            m_new"),
)
cross_entropy = _wrong.cross_entropy
