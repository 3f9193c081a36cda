"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.commands.bench_sweep import Shape, Workload


def _attention_inputs(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    q = torch.randn(shape["B"], shape["H"], shape["S_q"], shape["D"], device=device, dtype=dtype)
    k = torch.randn(shape["B"], shape["H"], shape["S_k"], shape["D"], device=device, dtype=dtype)
    return (q, k, torch.randn_like(k))


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v)


WORKLOADS = {
    "attention": Workload(
        make_inputs=_attention_inputs, baselines={"torch sdpa": _sdpa}, metric="tflops",
        flops=lambda s: 4.0 * s["B"] * s["H"] * s["S_q"] * s["S_k"] * s["D"],  # = spec flops(..., causal=False)
        # Against SDPA, fp16 (fp32 accumulation in both, different summation order): the spec's 2e-2/1e-2.
        tolerance={torch.float16: (1e-2, 2e-2), torch.bfloat16: (2e-2, 5e-2), torch.float32: (1e-2, 1e-2)},
    ),
}
