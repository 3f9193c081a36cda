"""Wrong (for speed): the output is allocated with torch.zeros, a fill kernel that writes every
byte before the softmax kernel writes them again: a second launch and a fourth trip through memory."""

from grader.exercises._shared.variants import solution_with
from solutions.ex05_online_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "filled with torch"
SELECT = "matches_reference and 3x781 and fp32"


_wrong = solution_with(
    "ex05_online_softmax",
    ("out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)",
     "out = torch.zeros((n_rows, n_cols), dtype=x.dtype, device=x.device)  # WRONG: a fill"),
)
softmax_online = _wrong.softmax_online
