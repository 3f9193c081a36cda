"""Wrong: the combine kernel adds the partial sums and accumulators without rescaling them to a common max."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "merged without rescaling"
SELECT = "running_max_changes"

_wrong = solution_with("ex08_decode", (
    "w = tl.math.exp2(m - m_ref)",
    "w = tl.where(ok, 1.0, 0.0)  # WRONG: partials summed as they are, not rescaled to the common max",
))
decode_attention = _wrong.decode_attention
