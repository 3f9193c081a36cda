"""Wrong: num_splits fills the wave without looking at the cache length: short caches get splits with no tile."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "a split with no tile would do nothing"
SELECT = "num_splits"

_wrong = solution_with("ex08_decode", (
    "return max(1, min(per_wave, tiles))",
    "return max(1, per_wave)  # WRONG: more splits than the longest sequence has tiles",
))
num_splits = _wrong.num_splits
decode_attention = _wrong.decode_attention
