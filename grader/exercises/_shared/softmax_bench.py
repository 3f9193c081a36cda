"""`grade bench`'s workload of the softmax family (exercises 3, 4 and 5 time the same thing): rows of
``(m, n)`` random values, and PyTorch's softmax over each row as the baseline. Each exercise's bench.py
names it in its `WORKLOADS` under the key its manifest's `[bench] workload` gives."""

from __future__ import annotations

import torch

from grader.commands.bench_sweep import Shape, Workload


def _rows(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    return (torch.randn(shape["m"], shape["n"], device=device, dtype=dtype),)


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


SOFTMAX_ROWS = Workload(make_inputs=_rows, baselines={"torch": _softmax})
