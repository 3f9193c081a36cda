"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here)."""

from __future__ import annotations

import torch

from grader.commands.bench_sweep import Shape, Workload


def _vectors(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    n = shape["n"]
    return (torch.randn(n, device=device, dtype=dtype), torch.randn(n, device=device, dtype=dtype))


WORKLOADS = {"vector_add": Workload(make_inputs=_vectors, baselines={"torch": torch.add})}
