"""Wrong: the bias is indexed by the row (bias[r]) instead of the column (bias[c])."""

from grader.exercises._shared.variants import solution_with
from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "indexed by the row instead of the column"
SELECT = "bias_broadcast and 5x64"


_wrong = solution_with(
    "ex02_bias_gelu",
    ("b = tl.load(bias_ptr + col, mask=mask)", "b = tl.load(bias_ptr + offs // N, mask=mask)"),  # WRONG: bias[row]
)
bias_gelu = _wrong.bias_gelu
