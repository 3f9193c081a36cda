"""Wrong: softmax_fraction stops at the first row that says "softmax"; a profile with PyTorch's
softmax in one attention and a Triton softmax in another has two."""

from grader.exercises._shared.variants import solution_with
from solutions.ex06_amdahl import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "you counted only"
SELECT = "softmax_fraction and mixed"


_wrong = solution_with(
    "ex06_amdahl",
    ('softmax = sum(row["device_time_us"] for row in profile if is_softmax(row["name"]))',
     'softmax = next(row["device_time_us"] for row in profile if is_softmax(row["name"]))  # WRONG: the first'),
)
softmax_fraction = _wrong.softmax_fraction
predict_speedup = _wrong.predict_speedup  # which calls it
