"""Vector add at n = 2^28 fp32 (3 GiB moved): the solution against torch.add, timed twice."""

from __future__ import annotations

import torch

from grader.benchmarks import time_row
from grader.specs.ex01_vector_add import minimum_bytes


def run() -> list[dict]:
    from solutions.ex01_vector_add import add

    rows = []
    for n in (1 << 20, 1 << 24, 1 << 28):
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        assert torch.equal(add(x, y), x + y)
        nbytes = minimum_bytes(n, 4)
        rows.append(time_row("solution", lambda: add(x, y), nbytes, n=n, dtype="fp32"))
        rows.append(time_row("torch", lambda: torch.add(x, y), nbytes, n=n, dtype="fp32"))
        del x, y
    return rows
