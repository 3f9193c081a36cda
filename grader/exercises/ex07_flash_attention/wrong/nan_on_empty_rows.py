"""Wrong: no guard for rows that see no key: key_lens[b] = 0 leaves l = 0 and acc / l = 0 / 0 = NaN."""

from grader.exercises._shared.variants import solution_with
from solutions.ex07_flash_attention import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "rows with no valid key must be zeros, not NaN"
SELECT = "key_lens and lens0_33_70"


_wrong = solution_with("ex07_flash_attention", (
    "l_safe = tl.where(l_i == 0.0, 1.0, l_i)", "l_safe = l_i  # WRONG: a row that saw no key divides 0 by 0",
))
attention = _wrong.attention
