"""Wrong: the second pass subtracts the max of the last block the first loop saw (`block_max`),
not the running max of the whole row. Right only when the row's max is in its last block."""

from grader.exercises._shared.variants import solution_with
from solutions.ex05_online_softmax import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "normalized with the max of the last block only"
SELECT = "early_spike and fp32"


_wrong = solution_with(
    "ex05_online_softmax",
    ("d = tl.full((), 0.0, tl.float32)",
     "d = tl.full((), 0.0, tl.float32)\n    block_max = tl.full((), float('-inf'), tl.float32)"),
    ("m_new = tl.maximum(m, tl.max(x, axis=0))",
     "block_max = tl.max(x, axis=0)\n        m_new = tl.maximum(m, block_max)"),
    ("y = tl.exp(x - m) * inv_d", "y = tl.exp(x - block_max) * inv_d  # WRONG: the last block's max, not m"),
)
softmax_online = _wrong.softmax_online
