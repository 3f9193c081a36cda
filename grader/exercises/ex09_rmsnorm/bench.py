"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.commands.bench_sweep import Shape, Workload

#: RMSNorm's eps in `grade bench` (Llama's).
_RMSNORM_EPS = 1e-6


def _rows_weight_eps(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    x = torch.randn(shape["m"], shape["n"], device=device, dtype=dtype)
    weight = (1 + 0.1 * torch.randn(shape["n"], device=device)).to(dtype)
    return (x, weight, _RMSNORM_EPS)


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


WORKLOADS = {
    # The forward returns (y, rstd): y is checked.
    "rmsnorm_forward": Workload(make_inputs=_rows_weight_eps, baselines={"torch": _rms_norm},
                                output=lambda result: result[0]),
}
