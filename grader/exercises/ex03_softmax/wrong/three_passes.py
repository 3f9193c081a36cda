"""Wrong (for speed): the "textbook" three-pass softmax in one kernel: read the row to find the
max, read it again for the sum of exponentials, read it a third time to write the output. The
answer is right; the bytes are not. In the interpreter the grader counts 3 reads of `x` where a
fused softmax needs 1: 2.00x the minimum bytes."""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "read `x` 3.00 times"
SELECT = "traffic"


_wrong = solution_with(
    "ex03_softmax",
    ("numerator = tl.exp(z)\n    denominator = tl.sum(numerator, axis=0)\n    y = numerator / denominator",
     "row_max = tl.max(x, axis=0)\n"
     "    # WRONG (for speed): the row read again for the sum, and a third time for the output\n"
     "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float('inf')).to(tl.float32)\n"
     "    denominator = tl.sum(tl.exp(x - row_max), axis=0)\n"
     "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float('inf')).to(tl.float32)\n"
     "    y = tl.exp(x - row_max) / denominator"),
)
softmax = _wrong.softmax
