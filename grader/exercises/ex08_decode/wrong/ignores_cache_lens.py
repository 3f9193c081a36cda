"""Wrong: every block-table entry is read; cache_lens is never used to stop a sequence.

The loop runs over the whole block table (max_pages pages), so the entries past a sequence's
last page, which point at pages that are not its own, are attended to as well."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "pages past cache_lens[b] were read"
SELECT = "matches_reference and lens300_3_47_160"

_wrong = solution_with(
    "ex08_decode",
    ("end = tl.minimum(start + tokens_per_split, cache_len)",
     "end = start + tokens_per_split  # WRONG: the split's tokens run past cache_lens[b]"),
    ("keep = head_ok & (start + 0 * offs_g < cache_len)", "keep = head_ok  # WRONG: every split stores a partial"),
    ("n_valid = (cache_len + tokens_per_split - 1) // tokens_per_split",
     "n_valid = num_splits  # WRONG: every split is merged"),
)
decode_attention = _wrong.decode_attention
