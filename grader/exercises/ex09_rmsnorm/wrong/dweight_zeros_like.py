"""Wrong: dweight, an output the backward returns, is made with `torch.zeros_like` before the kernels run.

A zeroed scratch buffer is allowed (natural/zeroed_partials.py); a returned output filled by torch is a
whole extra launch over it, and the message names that output, not another."""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "`dweight` was filled with torch before your kernel ran"
SELECT = "test_backward and 37x129 and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("dweight = torch.empty_like(weight)",
     "dweight = torch.zeros_like(weight)  # WRONG: an output; the reduction kernel writes every element"),
)
rmsnorm_backward = _wrong.rmsnorm_backward
