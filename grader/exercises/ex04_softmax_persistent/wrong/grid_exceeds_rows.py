"""Wrong: grid_size forgets the rows: it always fills every SM, even for 3 rows.

The loop bounds keep the extra programs idle, so the answer is right; the grid is not.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex04_softmax_persistent import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'never launch more programs than rows'
SELECT = 'grid and few_rows'


_wrong = solution_with(
    "ex04_softmax_persistent",
    ("return min(n_rows, programs_per_sm * num_sms)",
     "return programs_per_sm * num_sms  # WRONG: no min(n_rows, ...), so more programs than rows"),
)
grid_size = _wrong.grid_size
softmax_persistent = _wrong.softmax_persistent
