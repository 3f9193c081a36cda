"""Wrong: the combine kernel merges every split, also those that start past a sequence's end and
wrote nothing: their partials are whatever torch.empty left there."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "partials that no program wrote"
SELECT = "sm_scale"

_wrong = solution_with("ex08_decode", (
    "n_valid = (cache_len + tokens_per_split - 1) // tokens_per_split",
    "n_valid = num_splits  # WRONG: splits past cache_lens[b] wrote no partial",
))
decode_attention = _wrong.decode_attention
