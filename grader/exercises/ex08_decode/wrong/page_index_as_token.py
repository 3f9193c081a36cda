"""Wrong: the page index is multiplied by the stride between tokens, as if it were a token index.

Row (page + slot) of the flattened pool is read instead of slot `slot` of page `page`."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "the page index was used as a token index"
SELECT = "matches_reference and lens300_3_47_160"

# K and V rows at (page + slot) * stride of a slot: the page index used as if it counted tokens.
_wrong = solution_with(
    "ex08_decode",
    ("            + pages[:, None] * stride_kp\n            + slots[:, None] * stride_ks",
     "            + (pages[:, None] + slots[:, None]) * stride_ks  # WRONG"),
    ("            + pages[:, None] * stride_vp\n            + slots[:, None] * stride_vs",
     "            + (pages[:, None] + slots[:, None]) * stride_vs  # WRONG"),
)
decode_attention = _wrong.decode_attention
