"""Wrong: the running max is taken over the raw scores and the mask is applied afterwards.

Keys are loaded up to S_k (the tensor's end) and key_lens is applied to the scores only: fine
while padding keys hold ordinary values, but one large padding score makes exp(s - m)
underflow to 0 for every real key of the row.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex07_flash_attention import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "was the mask applied after the max?"
SELECT = "masked_keys_ignored and not causal"


_wrong = solution_with(
    "ex07_flash_attention",
    ("kv_len,  # keys at kv_len and beyond are padding (masked)", "kv_len, seq_k,"),
    ("        kv_len,\n        qk_scale,", "        kv_len,\n        seq_k,\n        qk_scale,", 2),
    ("k = tl.load(k_ptrs, mask=cols[:, None] < kv_len, other=0.0)",
     "k = tl.load(k_ptrs, mask=cols[:, None] < seq_k, other=0.0)  # WRONG: padding keys loaded"),
    ('s = tl.where(visible, s * qk_scale, float("-inf"))',
     's = tl.where(cols[None, :] < seq_k, s * qk_scale, float("-inf"))  # WRONG: the max sees padding keys'),
    ("p = tl.math.exp2(s - m_new[:, None])  # e^-inf = 0 exactly for masked keys",
     "p = tl.where(visible, tl.math.exp2(s - m_new[:, None]), 0.0)  # the mask, after the max"),
)
attention = _wrong.attention
