"""FlashAttention forward: the solution against PyTorch's scaled_dot_product_attention (SDPA).

Shapes of chapter 8: B 8, H 32, S 4096, D 64 and B 4, H 32, S 4096, D 128, causal and not, in
fp16 (and bf16 at the first shape, the dtype of the calibration run in h200-attention-2026-11-30.json), plus one ragged length
(B 4, H 16, S 4000, D 64; and D 128). Each row has TFLOP/s (4 · B · H · S² · D, half of that
causal), the ratio to SDPA on the same inputs, and the solution's largest difference from SDPA's
output. The solution and SDPA are timed in turns, three rounds each (`time_rows_in_turns`: SDPA's
speed moves with the card's power state), and the ratio is of the two medians.

Then a sweep of (BLOCK_M, BLOCK_N, num_warps, num_stages) per head size and mask at the two
main shapes (fp16), each configuration in turns with SDPA (two rounds), to calibrate ``_config``
in solutions/ex07_flash_attention.py; the ``best config`` rows summarise it. About a minute on an
H200 (57 s, most of it compiling).

    python -m tools.benchmarks ex07_flash_attention --out docs/measurements
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F

from grader.exercises.ex07_flash_attention.spec import flops
from tools.benchmarks import failed_row, time_rows_in_turns

SHAPES = [
    (8, 32, 4096, 64, torch.float16),
    (8, 32, 4096, 64, torch.bfloat16),
    (4, 32, 4096, 128, torch.float16),
    (4, 16, 4000, 64, torch.float16),  # S not a multiple of any block: the masked tail runs
    (4, 16, 4000, 128, torch.float16),
]

#: (BLOCK_M, BLOCK_N, num_warps, num_stages). Compiled for sm_90 with Triton 3.6 (no GPU needed:
#: triton.compile with a GPUTarget, then ptxas -v), none spills; shared memory per program and
#: registers per thread were: D 64: (128, 64, 8, 3) 64 KB, 127 (two programs per SM);
#: (128, 128, 8, 3) 112 KB, 172; (128, 64, 4, 3) 64 KB, 255; (64, 64, 4, 3) 56 KB, 128;
#: (128, 32, 4, 4) 48 KB, 180. D 128: (128, 64, 8, 3) 128 KB, 182; (128, 128, 8, 2) 160 KB, 255;
#: (128, 32, 8, 3) 80 KB, 140; (64, 64, 4, 3) 112 KB, 176.
SWEEP = {
    64: [(128, 64, 8, 3), (128, 64, 8, 4), (128, 128, 8, 3), (128, 64, 4, 3), (64, 64, 4, 3), (128, 32, 4, 4)],
    128: [(128, 64, 8, 3), (128, 64, 8, 2), (128, 128, 8, 2), (128, 32, 8, 3), (64, 64, 4, 3)],
}
SWEEP_SHAPES = {64: (8, 32, 4096), 128: (4, 32, 4096)}

DTYPE = {torch.float16: "fp16", torch.bfloat16: "bf16"}


@contextlib.contextmanager
def _config(module, config):
    """Run the solution with ``config`` instead of what its ``_config`` picks."""
    original = module._config
    module._config = lambda head_dim, causal: config
    try:
        yield
    finally:
        module._config = original


def _inputs(B, H, S, D, dtype):
    generator = torch.Generator().manual_seed(0)
    return [torch.randn((B, H, S, D), generator=generator).to(dtype).cuda() for _ in range(3)]


def _compare(out: torch.Tensor, want: torch.Tensor) -> dict:
    diff = (out.float() - want.float()).abs().max().item()
    return {"max_abs_diff_vs_sdpa": round(diff, 6),
            "rel_diff_vs_sdpa": round(diff / max(want.float().abs().max().item(), 1e-30), 6)}


def _against_sdpa(name: str, fn, q, k, v, want: torch.Tensor, rounds: int, **shape) -> list[dict]:
    """[SDPA's row, ``fn``'s row], timed in turns; ``fn``'s row carries the ratio and its error."""
    B, H, S, D = q.shape
    causal = shape["causal"]
    out = fn()
    check = _compare(out, want)
    del out
    rows = time_rows_in_turns({"sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), name: fn},
                              flops=flops(B, H, S, S, D, causal), rounds=rounds, **shape)
    ours = rows[name]
    ours.update(check)
    ours["ratio_to_sdpa"] = round(rows["sdpa"]["ms"] / ours["ms"], 4)  # same FLOPs: the ratio of times
    return [rows["sdpa"], ours]


def run() -> list[dict]:
    import solutions.ex07_flash_attention as solution

    rows = []
    for B, H, S, D, dtype in SHAPES:
        q, k, v = _inputs(B, H, S, D, dtype)
        for causal in (False, True):
            shape = dict(B=B, H=H, S=S, D=D, causal=causal, dtype=DTYPE[dtype])
            want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            try:
                pair = _against_sdpa("solution", lambda: solution.attention(q, k, v, causal=causal), q, k, v, want,
                                     rounds=3, **shape)
                pair[1]["config"] = list(solution._config(D, causal))
                rows += pair
            except Exception as exc:  # a failure at one shape is a finding, not the end of the run
                rows.append(failed_row("solution", exc, **shape))
            del want
        del q, k, v
        torch.cuda.empty_cache()

    for D, configs in SWEEP.items():
        B, H, S = SWEEP_SHAPES[D]
        q, k, v = _inputs(B, H, S, D, torch.float16)
        for causal in (False, True):
            shape = dict(B=B, H=H, S=S, D=D, causal=causal, dtype="fp16")
            want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            sweep = []
            for config in configs:
                try:
                    with _config(solution, config):
                        _, row = _against_sdpa("sweep", lambda: solution.attention(q, k, v, causal=causal), q, k, v,
                                               want, rounds=2, **shape)
                    row["config"] = list(config)
                    sweep.append(row)
                except Exception as exc:
                    row = failed_row("sweep", exc, **shape, config=list(config))
                rows.append(row)
            good = [r for r in sweep if r["rel_diff_vs_sdpa"] < 1e-2]
            if good:
                best = max(good, key=lambda r: r["ratio_to_sdpa"])
                rows.append({"kernel": "best config", **shape, "config": best["config"], "ms": best["ms"],
                             "tflops": best["tflops"], "ratio_to_sdpa": best["ratio_to_sdpa"]})
            del want
        del q, k, v
        torch.cuda.empty_cache()
    return rows
