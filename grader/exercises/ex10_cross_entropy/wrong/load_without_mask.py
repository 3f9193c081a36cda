"""Wrong: pass 1 loads whole blocks, without the mask: the last block of a row reads past V, into the
next row and, from the last row, past the end of the logits (the grader's NaN)."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'read past the end of `logits`'
SELECT = 'matches_reference and 3x24581-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ('x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(\n'
     "                tl.float32\n"
     "            )\n"
     "            m_new",
     "x = tl.load(x_row + start + cols).to(tl.float32)  # WRONG: no mask\n"
     "            m_new"),
)
cross_entropy = _wrong.cross_entropy
