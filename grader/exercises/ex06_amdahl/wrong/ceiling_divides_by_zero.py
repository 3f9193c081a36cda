"""Wrong: amdahl_ceiling is 1 / (1 - f) with no case for f = 1, where it divides by zero."""

from grader.exercises._shared.variants import solution_with
from solutions.ex06_amdahl import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "return math.inf"
SELECT = "amdahl_ceiling and f1"


_wrong = solution_with(
    "ex06_amdahl",
    ("return math.inf if f == 1 else 1.0 / (1.0 - f)", "return 1.0 / (1.0 - f)  # WRONG: f = 1 divides by zero"),
)
amdahl_ceiling = _wrong.amdahl_ceiling
