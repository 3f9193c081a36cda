"""Wrong: softmax_fraction returns a percentage (21.4), the way the profiler's table prints it,
instead of a fraction (0.214)."""

from grader.exercises._shared.variants import solution_with
from solutions.ex06_amdahl import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "that is a percentage"
SELECT = "softmax_fraction and seq2048"


_wrong = solution_with(
    "ex06_amdahl",
    ("return softmax / total", "return 100.0 * softmax / total  # WRONG: a percentage"),
)
softmax_fraction = _wrong.softmax_fraction
predict_speedup = _wrong.predict_speedup  # which calls it
