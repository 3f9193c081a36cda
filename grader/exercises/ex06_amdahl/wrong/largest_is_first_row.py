"""Wrong: largest_operator returns the first row, as if the profile were always sorted."""

from grader.exercises._shared.variants import solution_with
from solutions.ex06_amdahl import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "that is the first row"
SELECT = "largest_operator and mixed"


_wrong = solution_with(
    "ex06_amdahl",
    ('return max(profile, key=lambda row: row["device_time_us"])["name"]',
     'return profile[0]["name"]  # WRONG: as if the rows were sorted'),
)
largest_operator = _wrong.largest_operator
