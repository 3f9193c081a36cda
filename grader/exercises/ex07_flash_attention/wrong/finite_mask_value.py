"""Wrong: masked scores are -1e30, not -inf, and the loop runs over every key block.

With at least one visible key the finite mask is harmless (e^(-1e30 - m) = 0), but in a row
where every key is masked (key_lens[b] = 0) the max is -1e30 itself and every masked key
counts with weight 1: the row gets the average of v instead of zeros.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex07_flash_attention import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "rows with no valid key must be exact zeros"
SELECT = "key_lens and lens0_33_70"


_wrong = solution_with(
    "ex07_flash_attention",
    ("kv_len,  # keys at kv_len and beyond are padding (masked)", "kv_len, seq_k,"),
    ("        kv_len,\n        qk_scale,", "        kv_len,\n        seq_k,\n        qk_scale,", 2),
    ('s = tl.where(visible, s * qk_scale, float("-inf"))', 's = tl.where(visible, s * qk_scale, -1e30)  # WRONG'),
    ("    end = kv_len\n", "    end = seq_k  # every key block, padding included\n"),
    ("v = tl.load(v_ptrs, mask=cols[:, None] < kv_len, other=0.0)",
     "v = tl.load(v_ptrs, mask=cols[:, None] < seq_k, other=0.0)"),
)
attention = _wrong.attention
