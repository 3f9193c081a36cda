"""Wrong (for speed): computes x + bias, then loads x again for the GELU instead of reusing the
register: the unfused pair's extra read, inside one kernel. The traffic check counts 2 reads of `x`."""

from grader.exercises._shared.variants import solution_with
from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "read `x` 2.00 times"
SELECT = "traffic"


_wrong = solution_with(
    "ex02_bias_gelu",
    ("out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))",
     "z = tl.load(x_ptr + x_offs, mask=mask).to(tl.float32) + b  # WRONG (for speed): x loaded again\n"
     "    out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))"),
)
bias_gelu = _wrong.bias_gelu
