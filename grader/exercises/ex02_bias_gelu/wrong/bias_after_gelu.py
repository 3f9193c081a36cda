"""Wrong: GELU is applied to x and the bias added afterwards: gelu(x) + bias."""

from grader.exercises._shared.variants import solution_with
from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "looks like bias added after GELU"
SELECT = "matches_reference and 3x127 and fp32"


_wrong = solution_with(
    "ex02_bias_gelu",
    ("z = x.to(tl.float32) + b", "z = x.to(tl.float32)"),
    ("out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))",
     "out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476)) + b  # WRONG: bias after GELU"),
)
bias_gelu = _wrong.bias_gelu
