"""Wrong: dweight = Σ dy · y, the forward's output (which already contains w), instead of
Σ dy · x̂. The derivative of y = x̂ · w with respect to w is x̂. dx is right."""

from grader.exercises._shared.variants import solution_with
from solutions.ex09_rmsnorm import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "dweight is multiplied by the weight"
SELECT = "test_backward and 37x129 and fp32"


_wrong = solution_with(
    "ex09_rmsnorm",
    ("dw += dy * x_hat",
     "dw += dy * x_hat * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)  # WRONG: dy * y"),
)
rmsnorm_backward = _wrong.rmsnorm_backward
