"""Wrong: the gradient goes into a new (T, V) tensor (as autograd would allocate it) and the logits
are left as they were. The loss is right."""

from grader.exercises._shared.variants import solution_with
from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'is exactly as it was handed over'
SELECT = 'matches_reference and 6x781-fp32'


_wrong = solution_with(
    "ex10_cross_entropy",
    ("    logits_ptr,  # pointer to logits[0, 0]: read, then overwritten with the gradient\n",
     "    logits_ptr,  # pointer to logits[0, 0]\n"
     "    grad_ptr,  # WRONG: the gradient goes to a new tensor\n"),
    ("x_row = logits_ptr + row * logits_row_stride",
     "x_row = logits_ptr + row * logits_row_stride\n"
     "    g_row = grad_ptr + row * n_cols"),
    ("x_row + start + cols,\n"
     "                zeros",
     "g_row + start + cols,\n"
     "                zeros"),
    ("x_row + start + cols, grad.to(",
     "g_row + start + cols, grad.to("),
    ("count = torch.empty((), dtype=torch.int32, device=logits.device)",
     "count = torch.empty((), dtype=torch.int32, device=logits.device)\n"
     "    grad = torch.empty_like(logits)"),
    ("logits, logits.stride(0), target,",
     "logits, grad, logits.stride(0), target,"),
)
cross_entropy = _wrong.cross_entropy
