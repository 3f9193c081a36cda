"""Wrong: one program per (sequence, KV head): the launcher never splits the keys.

Correct, but one long sequence with 8 KV heads runs 8 programs on a GPU with 132 SMs."""

from grader.exercises._shared.variants import solution_with
from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "leaves most of the"
SELECT = "splits_the_keys"

_wrong = solution_with("ex08_decode", (
    "    splits = num_splits(\n"
    "        capacity, B, H_kv, _num_sms(q.device), tile_tokens=TILE, programs_per_sm=per_sm\n"
    "    )",
    "    splits = 1  # WRONG: one program per (sequence, KV head)",
))
decode_attention = _wrong.decode_attention
