"""Wrong: one program per (split, query head, sequence): each query head reads its KV head's rows itself.

The answer is right, but the G query heads of a group read the same K and V rows G times."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "one read per query head"
SELECT = "traffic"

# One program per (split, query head, sequence): each of the G query heads of a group reads its KV
# head's K and V again.
_wrong = solution_with(
    "ex08_decode",
    ("kv_head = tl.program_id(1)", "q_head = tl.program_id(1)  # WRONG: a query head, not a KV head\n"
                                   "    kv_head = q_head // GROUP"),
    ("num_q_heads = tl.num_programs(1) * GROUP", "num_q_heads = tl.num_programs(1)"),
    ("heads = kv_head * GROUP + offs_g", "heads = q_head + offs_g"),
    ("head_ok = offs_g < GROUP", "head_ok = offs_g < 1"),
    ("capacity, B, H_kv, _num_sms", "capacity, B, H_q, _num_sms"),
    ("decode_split_kernel[(splits, H_kv, B)](", "decode_split_kernel[(splits, H_q, B)]("),
)
decode_attention = _wrong.decode_attention
