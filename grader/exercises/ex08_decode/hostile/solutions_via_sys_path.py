"""Hostile submission, exercise 8 (decode): the reference solution imported through `os.path.sys.path`.

`os` is allowed for the environment and paths; `os.path` imported `sys`, whose `path` takes the
course's root, and `__import__` then loads the solution without an import statement.
"""

import math
import os

import torch
import triton
import triton.language as tl

ATTACK = ("puts the course's root on os.path.sys.path (found from __file__) and loads solutions.ex08_decode with "
          "__import__ to return its decode_attention's answer; where the course tree is hidden it computes the "
          "answer with eager torch")
KIND = "reference"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("os.path.sys", "__import__")
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: "
               "`os.path.sys` (a way to the module `sys`) and `__import__`; the sandbox hides solutions/ from the "
               "learner's process, and the fallback's eager torch is what the watch records")


def _reference():
    here = os.path.dirname(os.path.abspath(__file__))
    for up in ("..", "../..", "../../..", "../../../.."):
        root = os.path.abspath(os.path.join(here, up))
        if os.path.isfile(os.path.join(root, "solutions", "ex08_decode.py")):
            os.path.sys.path.insert(0, root)
            return __import__("solutions.ex08_decode", fromlist=["decode_attention"]).decode_attention
    return None


@triton.jit
def noop_kernel(out_ptr):
    pid = tl.program_id(0)


def decode_attention(q, k_cache, v_cache, block_table, cache_lens, sm_scale=None):
    reference = _reference()
    if reference is not None:
        return reference(q, k_cache, v_cache, block_table, cache_lens, sm_scale)
    B, H_q, D = q.shape
    _, page, H_kv, _ = k_cache.shape
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(D)
    out = torch.empty_like(q)
    for b in range(B):
        n = int(cache_lens[b])
        pages = block_table[b, : (n + page - 1) // page]
        k = k_cache[pages].reshape(-1, H_kv, D)[:n].float()
        v = v_cache[pages].reshape(-1, H_kv, D)[:n].float()
        group = H_q // H_kv
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        weights = torch.softmax(torch.einsum("hd,nhd->hn", q[b].float(), k) * scale, dim=-1)
        out[b] = torch.einsum("hn,nhd->hd", weights, v).to(q.dtype)
    noop_kernel[(1,)](out)
    return out
