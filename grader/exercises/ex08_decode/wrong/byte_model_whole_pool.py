"""Wrong: the byte model counts the whole pool (num_pages) instead of the valid tokens."""

from solutions.ex08_decode import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "that counts the whole pool"
SELECT = "byte_model"

def minimum_bytes(cache_lens, num_pages, page_size, num_q_heads, num_kv_heads, head_dim, element_size):
    tokens = num_pages * page_size  # WRONG: the whole pool, not sum(cache_lens)
    return (2 * tokens * num_kv_heads * head_dim + 2 * len(cache_lens) * num_q_heads * head_dim) * element_size
