"""Wrong: tokens are masked by whole pages, so the last page is read whole.

The slots of a sequence's last page past cache_lens[b] hold anything (NaN in the grader's pool)."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the last page was read whole"
SELECT = "matches_reference and lens300_3_47_160"

_wrong = solution_with("ex08_decode", (
    "end = tl.minimum(start + tokens_per_split, cache_len)",
    "whole = (cache_len + PAGE_SIZE - 1) // PAGE_SIZE * PAGE_SIZE  # WRONG: the last page to its end\n"
    "    end = tl.minimum(start + tokens_per_split, whole)",
))
decode_attention = _wrong.decode_attention
