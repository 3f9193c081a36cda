"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.commands.bench_sweep import Shape, Workload


def _paged_cache(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    """A decode step over a paged cache: every sequence S_k tokens, its pages shuffled through the pool."""
    B, S, ps = shape["B"], shape["S_k"], shape["page_size"]
    pages = -(-S // ps)
    k = torch.randn(B * pages, ps, shape["H_kv"], shape["D"], device=device, dtype=dtype)
    table = torch.randperm(B * pages, device=device).to(torch.int32).reshape(B, pages)
    lens = torch.full((B,), S, dtype=torch.int32, device=device)
    q = torch.randn(B, shape["H_q"], shape["D"], device=device, dtype=dtype)
    return (q, k, torch.randn_like(k), table, lens)


def _gathered_sdpa(q, k_cache, v_cache, block_table, cache_lens) -> torch.Tensor:
    """SDPA on the cache gathered into contiguous (B, H_kv, S, D) tensors (every sequence full length)."""
    B = block_table.shape[0]

    def gather(pool):
        return pool[block_table.long()].reshape(B, -1, *pool.shape[2:]).transpose(1, 2)

    out = F.scaled_dot_product_attention(q.unsqueeze(2), gather(k_cache), gather(v_cache), enable_gqa=True)
    return out.squeeze(2)


WORKLOADS = {"paged_decode": Workload(make_inputs=_paged_cache, baselines={"torch sdpa (gathered)": _gathered_sdpa})}
