"""Wrong: exercise 3's launcher, one block as long as the row. Right, but no program can hold a row
of 128256 logits in registers."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'each row was read as one block'
SELECT = 'long_rows and fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("BLOCK = min(BLOCK_BYTES // logits.element_size(), triton.next_power_of_2(n_cols))",
     "BLOCK = triton.next_power_of_2(n_cols)  # WRONG: the whole row in one block"),
)
cross_entropy = _wrong.cross_entropy
