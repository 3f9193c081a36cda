"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.commands.bench_sweep import Shape, Workload


def _rows_and_bias(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    x = torch.randn(shape["m"], shape["n"], device=device, dtype=dtype)
    return (x, torch.randn(shape["n"], device=device, dtype=dtype))


def _bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.gelu(x + bias)


WORKLOADS = {"bias_gelu": Workload(make_inputs=_rows_and_bias, baselines={"torch": _bias_gelu})}
