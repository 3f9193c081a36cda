"""Wrong: the output is allocated with zeros_like, a whole extra kernel launch writing every byte.

The answer is right, and the fill costs a full write of `out` before the kernel writes it again:
removing it looks like a speedup that no kernel change earned.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "filled with torch before your kernel ran"
SELECT = "matches_reference and n781 and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ("out = torch.empty_like(x)",
     "out = torch.zeros_like(x)  # WRONG: an extra launch; the kernel writes every element anyway"),
)
softmax = _wrong.softmax
