"""Wrong: the target's logit is loaded after pass 2, when the row already holds its gradient: the
loss uses (p - 1) / count instead of x[target]. The gradient itself is right."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the target's logit was read after its row had been overwritten"
SELECT = 'matches_reference and 6x781-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("tl.store(row_loss_ptr + row, (lse - x_target) * inv_count)",
     "x_target = tl.load(x_row + target).to(tl.float32)  # WRONG: pass 2 has overwritten it with the gradient\n"
     "        tl.store(row_loss_ptr + row, (lse - x_target) * inv_count)"),
)
cross_entropy = _wrong.cross_entropy
