"""Wrong: the merge has no guard for a sequence with no token: every partial max is -inf, and
exp2(-inf - (-inf)) = NaN."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "must give zeros, not NaN"
SELECT = "every_sequence_empty"

_wrong = solution_with("ex08_decode", (
    'm_ref = tl.where(m_all == float("-inf"), 0.0, m_all)',
    "m_ref = m_all  # WRONG: a sequence with no token gives exp2(-inf - -inf) = NaN",
))
decode_attention = _wrong.decode_attention
