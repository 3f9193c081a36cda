"""Wrong: GELU by the tanh approximation (what approximate="tanh" computes) where the exact erf
form is asked."""

from grader.exercises._shared.variants import solution_with
from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "matches the tanh approximation of GELU, not the exact erf form"
SELECT = "matches_reference and 3x127"


_wrong = solution_with(
    "ex02_bias_gelu",
    ("out = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))",
     "inner = 0.7978845608028654 * (z + 0.044715 * z * z * z)\n"
     "    out = 0.5 * z * (2.0 - 2.0 / (tl.exp(2.0 * inner) + 1.0))  # WRONG: the tanh approximation"),
)
bias_gelu = _wrong.bias_gelu
