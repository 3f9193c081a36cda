"""The course's transformer block profiled and timed with torch.softmax and with a swapped-in
softmax: the measurement behind exercise 6's GPU check and its benchmark
(tools/benchmarks/ex06_amdahl.py), run in the process that imported the softmax."""

from __future__ import annotations

from typing import Callable

import torch

from grader.exercises._shared import model, profiling


def measure_block(softmax_fn: Callable, *, seq: int, batch: int, device: str = "cuda", d_model: int = model.D_MODEL,
                  n_heads: int = model.N_HEADS, mlp_ratio: int = model.MLP_RATIO, dtype: torch.dtype = torch.float32,
                  timer: Callable[[Callable], float] | None = None, iterations: int = profiling.ITERATIONS,
                  warmup: int = profiling.WARMUP) -> dict:
    """Profile and time the block with torch.softmax and with ``softmax_fn``; plain numbers and rows.

    ``timer(fn) -> ms`` defaults to `grader.bandwidth.time_ms` (CUDA events, median, L2 flushed);
    the end-to-end timings alternate the two blocks (A, B, A, B) and keep each one's best median,
    so a drift in clocks during the measurement touches both alike.
    """
    from grader.learner.call_watch import count_launches

    if timer is None:
        from grader import bandwidth

        timer = bandwidth.time_ms
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    generator = torch.Generator(device=device)
    generator.manual_seed(0)
    rows, cols = model.score_rows(batch, seq, n_heads)

    # 1. The swapped softmax alone, on a matrix of the block's score shape: right, which kernels, how fast.
    scores = torch.randn((rows, cols), device=device, dtype=dtype, generator=generator)
    probs, launches = count_launches(softmax_fn, scores)
    sync()
    # Against torch.softmax in the same dtype: a float64 copy of a 1 GB score matrix would not fit a small GPU.
    softmax_error = float((probs.float() - torch.softmax(scores.float(), dim=-1)).abs().max())
    kernel_names = sorted({launch.kernel for launch in launches})
    del probs
    softmax_ms_torch, softmax_ms_swapped = [], []
    for _ in range(2):
        softmax_ms_torch.append(timer(lambda: model.torch_softmax(scores)))
        softmax_ms_swapped.append(timer(lambda: softmax_fn(scores)))
    del scores

    # 2. Two blocks with the same weights: PyTorch's softmax, and the swapped one.
    reference = model.make_block(d_model=d_model, n_heads=n_heads, mlp_ratio=mlp_ratio, device=device, dtype=dtype)
    swapped = model.make_block(d_model=d_model, n_heads=n_heads, mlp_ratio=mlp_ratio, device=device, dtype=dtype)
    swapped.softmax = softmax_fn
    x = torch.randn((batch, seq, d_model), device=device, dtype=dtype, generator=generator)
    with torch.inference_mode():
        y_reference = reference(x)
        y_swapped = swapped(x)
        sync()
        block_error = float((y_swapped.double() - y_reference.double()).abs().max() / y_reference.abs().max())
    del y_reference, y_swapped

    profile_reference = profiling.profile_block(reference, x, iterations=iterations, warmup=warmup)
    profile_swapped = profiling.profile_block(swapped, x, iterations=iterations, warmup=warmup)

    ms_reference, ms_swapped = [], []
    with torch.inference_mode():
        for _ in range(2):
            ms_reference.append(timer(lambda: reference(x)))
            ms_swapped.append(timer(lambda: swapped(x)))
    best = min(ms_reference), min(ms_swapped)
    return {
        "seq_len": seq, "batch": batch, "d_model": d_model, "n_heads": n_heads, "mlp_ratio": mlp_ratio,
        "dtype": str(dtype).removeprefix("torch."), "softmax_shape": [rows, cols],
        "softmax_kernels": kernel_names, "softmax_error": softmax_error, "block_error": block_error,
        "softmax_ms_torch": round(min(softmax_ms_torch), 5), "softmax_ms_swapped": round(min(softmax_ms_swapped), 5),
        "softmax_ms_runs": {"torch": [round(t, 5) for t in softmax_ms_torch],
                            "swapped": [round(t, 5) for t in softmax_ms_swapped]},
        "local_speedup": round(min(softmax_ms_torch) / min(softmax_ms_swapped), 4),
        "ms": round(best[0], 5), "ms_swapped": round(best[1], 5),
        "ms_runs": {"torch": [round(t, 5) for t in ms_reference], "swapped": [round(t, 5) for t in ms_swapped]},
        "measured_speedup": round(best[0] / best[1], 4),
        # Share of the pass the GPU was busy in the profiled kernels: the rest is idle gaps and launches.
        "busy_fraction": round(profiling.total_us(profile_reference) / (best[0] * 1000), 4),
        "profile": profile_reference, "profile_swapped": profile_swapped,
    }
