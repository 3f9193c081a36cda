"""The points of chapter 1's roofline, measured in one run with the roofs they are drawn against.

The memory roof is the run's measured ceiling (``meta.ceiling_gbps``: the better of a copy and an
add, as the grader's). The compute roof is the best attention measured here (SDPA, cuDNN), a rate
actually reached rather than the datasheet's. Rows, each with the ``flops`` and ``bytes`` of one
call (its intensity is their ratio):

* ``vector_add``: exercise 1's solution at n = 2^27 fp32 (1 FLOP and 12 bytes per element);
* ``softmax``: exercise 3's solution at 4096 × 4096 fp32 (about 5 FLOP per element: max, subtract,
  exp, sum, divide; 8 bytes per element);
* ``attention_solution`` and ``attention_sdpa``: exercise 7's solution and SDPA at B 8, H 32,
  S 4096, D 64, fp16, not causal, timed in turns (3 rounds): ``4 · B · H · S² · D`` FLOP over
  Q, K, V and O read or written once.

    python -m tools.benchmarks roofline --out docs/measurements
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader import bandwidth
from grader.exercises.ex07_flash_attention.spec import flops as attention_flops
from tools.benchmarks import ceiling_gbps, time_row, time_rows_in_turns

ADD_N = 1 << 27
SOFTMAX_SHAPE = (4096, 4096)
ATTENTION_SHAPE = (8, 32, 4096, 64)


def _memory_rows() -> list[dict]:
    from solutions.ex01_vector_add import add
    from solutions.ex03_softmax import softmax

    x = torch.randn(ADD_N, device="cuda")
    y = torch.randn(ADD_N, device="cuda")
    assert torch.equal(add(x, y), x + y)
    add_row = time_row("vector_add", lambda: add(x, y), 12 * ADD_N, flops=float(ADD_N), n=ADD_N, dtype="fp32")
    del x, y
    m, n = SOFTMAX_SHAPE
    x = torch.randn(m, n, device="cuda")
    assert torch.allclose(softmax(x), torch.softmax(x, dim=-1), rtol=1e-4, atol=1e-6)
    softmax_row = time_row("softmax", lambda: softmax(x), 8 * m * n, flops=5.0 * m * n, M=m, N=n, dtype="fp32")
    return [{**add_row, "flops": float(ADD_N)}, {**softmax_row, "flops": 5.0 * m * n}]


def _attention_rows() -> list[dict]:
    from solutions.ex07_flash_attention import attention

    B, H, S, D = ATTENTION_SHAPE
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    expected = F.scaled_dot_product_attention(q, k, v)
    error = (attention(q, k, v) - expected).abs().max().item()
    assert error < 1e-2, f"exercise 7's solution differs from SDPA by {error}"
    flops = attention_flops(B, H, S, S, D, causal=False)
    nbytes = 4 * B * H * S * D * 2
    rows = time_rows_in_turns({"attention_solution": lambda: attention(q, k, v),
                               "attention_sdpa": lambda: F.scaled_dot_product_attention(q, k, v)},
                              flops=flops, rounds=3, B=B, H=H, S=S, D=D, dtype="fp16", causal=False)
    for row in rows.values():
        achieved = bandwidth.gbps(nbytes, row["ms"])
        row.update(flops=flops, bytes=nbytes, gbps=round(achieved, 1), fraction=round(achieved / ceiling_gbps(), 4))
    return list(rows.values())


def run() -> list[dict]:
    return _memory_rows() + _attention_rows()
