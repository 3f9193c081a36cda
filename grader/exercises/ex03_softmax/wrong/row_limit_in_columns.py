"""Wrong: the launcher refuses rows over 32768 columns whatever the dtype. The limit is in bytes
(128 KiB per row): a float16 or bfloat16 row of 65536 columns fits in one block too."""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "holds rows of up to 128 KiB in one block"
SELECT = "longest_row and bf16"


_wrong = solution_with(
    "ex03_softmax",
    ("if n_cols > max_cols(x.dtype):",
     "if n_cols > 32768:  # WRONG: 32768 float32 columns are 128 KiB, but 65536 bfloat16 columns are too"),
)
softmax = _wrong.softmax
