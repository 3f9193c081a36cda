"""Vector add at n = 2^28 fp32 (3 GiB moved): the solution against torch.add, timed twice."""

from __future__ import annotations

import torch

from grader.exercises.ex01_vector_add.spec import minimum_bytes
from tools.benchmarks import time_row


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
    # The floor's justification: the same kernel with other block sizes, at 2^28 fp32.
    from solutions.ex01_vector_add import add_kernel

    import triton

    n = 1 << 28
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    for block in (128, 256, 512, 2048, 4096):
        def launch(block=block):
            add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK_SIZE=block)
        launch()
        assert torch.equal(out, x + y)
        rows.append(time_row(f"solution BLOCK={block}", launch, minimum_bytes(n, 4), n=n, dtype="fp32"))
    return rows
