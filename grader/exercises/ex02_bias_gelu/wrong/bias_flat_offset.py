"""Wrong: the bias is loaded with the 2-D offset of x (row * stride + column) instead of the
column: row 0 is right, every later row reads past the end of `bias`."""

from grader.exercises._shared.variants import solution_with
from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the bias looks indexed by the flat offset instead of the column"
SELECT = "matches_reference and 3x127 and fp32"


_wrong = solution_with(
    "ex02_bias_gelu",
    ("b = tl.load(bias_ptr + col, mask=mask)", "b = tl.load(bias_ptr + offs, mask=mask)"),  # WRONG: x's offset
)
bias_gelu = _wrong.bias_gelu
