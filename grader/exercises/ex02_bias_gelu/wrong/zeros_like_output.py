"""Wrong (for speed): the output is allocated with zeros_like, so every byte is written twice:
once by the fill kernel, once by bias_gelu_kernel."""

from grader.exercises._shared.variants import solution_with
from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "filled with torch"
SELECT = "matches_reference and 3x127 and fp32"


_wrong = solution_with(
    "ex02_bias_gelu",
    ("out = torch.empty_like(x)", "out = torch.zeros_like(x)  # WRONG: an extra kernel writing every byte"),
)
bias_gelu = _wrong.bias_gelu
