"""Wrong: the kernel loops over rows correctly, but the launcher launches one program per row.

The answer is right (each program's loop runs once): the grid check sees exercise 3's grid.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex04_softmax_persistent import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'launched one program per row'
SELECT = 'grid and many_rows'


_wrong = solution_with(
    "ex04_softmax_persistent",
    ('grid = (grid_size(n_rows, per_sm, gpu["num_sms"]),)',
     "grid = (n_rows,)  # WRONG: exercise 3's grid, one program per row"),
)
softmax_persistent = _wrong.softmax_persistent
