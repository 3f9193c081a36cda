"""Wrong: the running sum l is not rescaled when the running max changes (acc is)."""

from grader.exercises._shared.variants import solution_with
from solutions.ex07_flash_attention import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the running sum/accumulator was not rescaled when the max changed"
SELECT = "running_max_changes"


_wrong = solution_with("ex07_flash_attention", (
    "l_i = l_i * alpha + tl.sum(p, 1)", "l_i = l_i + tl.sum(p, 1)  # WRONG: acc is rescaled, l is not",
))
attention = _wrong.attention
