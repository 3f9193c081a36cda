"""Wrong: the sped-up part is charged f · s of the old time instead of f / s, so a faster softmax
"slows the pass down": amdahl_speedup(0.21, 1.49) returns 0.907."""

from grader.exercises._shared.variants import solution_with
from solutions.ex06_amdahl import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "did you multiply f by s"
SELECT = "amdahl_speedup and seed"


_wrong = solution_with(
    "ex06_amdahl",
    ("new_time = (1.0 - f) + f / s", "new_time = (1.0 - f) + f * s  # WRONG: f · s, not f / s"),
)
amdahl_speedup = _wrong.amdahl_speedup
predict_speedup = _wrong.predict_speedup  # which calls it
