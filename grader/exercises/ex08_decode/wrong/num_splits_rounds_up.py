"""Wrong: num_splits rounds up, so the programs spill into a second, nearly empty wave."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "nearly empty wave"
SELECT = "num_splits"

_wrong = solution_with("ex08_decode", (
    "per_wave = (programs_per_sm * num_sms) // (num_seqs * num_kv_heads)",
    "per_wave = -(-(programs_per_sm * num_sms) // (num_seqs * num_kv_heads))  # WRONG: rounds up",
))
num_splits = _wrong.num_splits
decode_attention = _wrong.decode_attention
