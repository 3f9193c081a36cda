"""Wrong on a GPU: the kernel reads a module-level float, ``LOG2E = 1.4426950408889634``.

Triton's compiler only lets a kernel read globals that are ``tl.constexpr`` (or modules, jitted
functions, dtypes): this file does not compile for a GPU. Triton's interpreter would run it as
Python and pass it; the grader holds the interpreter to the compiler's rule, so the verdict is the
same on both machines. ``LOG2E = tl.constexpr(1.4426950408889634)`` compiles.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex03_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "Cannot access global variable LOG2E from within @jit'ed function"
SELECT = "matches_reference and n781 and fp32"


_wrong = solution_with(
    "ex03_softmax",
    ("@triton.jit\ndef softmax_kernel(", "LOG2E = 1.4426950408889634\n\n\n@triton.jit\ndef softmax_kernel("),
    ("numerator = tl.exp(z)", "numerator = tl.exp2(z * LOG2E)  # WRONG on a GPU: a plain float global"),
)
softmax = _wrong.softmax
