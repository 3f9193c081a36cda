"""Wrong: the group of query heads is strided: KV head h serves query heads h, h + H_kv, h + 2·H_kv, ...

So query head h reads KV head h % H_kv instead of h // G."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "read the wrong KV head"
SELECT = "matches_reference and lens200"

_wrong = solution_with("ex08_decode", (
    "heads = kv_head * GROUP + offs_g",
    "heads = offs_g * tl.num_programs(1) + kv_head  # WRONG: query heads interleaved, not grouped",
))
decode_attention = _wrong.decode_attention
