"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here)."""

from __future__ import annotations

import torch

from grader.commands.bench_sweep import Shape, Workload


def _rows(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    return (torch.randn(shape["m"], shape["n"], device=device, dtype=dtype),)


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


WORKLOADS = {"softmax": Workload(make_inputs=_rows, baselines={"torch": _softmax})}
