"""Wrong: the loads of K and V are not masked by cache_lens; only the scores are.

The loop runs to the end of the sequence's last page.
The scores past cache_lens[b] are -inf, so p = 0 there, but the V rows loaded there hold anything
(NaN in the grader's pool), and 0 · NaN = NaN."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "K or V rows past cache_lens[b] were loaded"
SELECT = "matches_reference and lens300_3_47_160"

# The scores of tokens past cache_lens[b] are still masked (`valid`), but K and V are loaded up to the
# end of the split and of the page that holds the last token.
_wrong = solution_with(
    "ex08_decode",
    ("for tile_start in range(start, end, TILE):",
     "for tile_start in range(start, tl.minimum(start + tokens_per_split, (cache_len // PAGE_SIZE + 1) * PAGE_SIZE),\n"
     "                            TILE):  # WRONG: past the last token"),
    ("valid = tokens < end\n",
     "valid = tokens < end\n        loaded = tokens < start + tokens_per_split  # WRONG: the loads' mask\n"),
    ("mask=valid", "mask=loaded", 3),
)
decode_attention = _wrong.decode_attention
