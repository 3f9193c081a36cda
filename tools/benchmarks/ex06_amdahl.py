"""Amdahl's Law on the course's transformer block (exercise 6): profile, predict, then measure.

For each sequence length (256 and 2048, 16384 tokens each) the block of `grader.exercises._shared.model` runs with
torch.softmax and with the course's exercise-3 softmax (``solutions/ex03_softmax.py``), and one
row records:

* ``profile``: the operator rows of one pass with torch.softmax (`grader.exercises._shared.profiling.profile_block`),
  and ``profile_swapped`` with the Triton softmax (its kernels in ``softmax_kernels``);
* ``softmax_fraction`` f, read from ``profile``; ``local_speedup`` s, torch.softmax against the
  solution on the block's score rows, (B·H·S, S) fp32, alone (with GB/s of the 2·rows·cols·4 bytes);
* ``predicted_speedup`` 1 / ((1 - f) + f / s), ``measured_speedup`` (the block with each softmax,
  timed alternately), their relative ``prediction_error``, the ``ceiling`` 1 / (1 - f) and the share
  of the ceiling's gain ``captured``;
* ``largest_operator`` before and after the swap, and ``busy_fraction``: the profiled kernel time
  over the measured time of a pass (the rest is the GPU idling between launches).

    python -m tools.benchmarks ex06_amdahl --out docs/measurements

writes ``<gpu>-ex06-amdahl.json``; the exercise's checks read ``docs/measurements/h200-ex06-*.json``.
Without a GPU, ``python -m tools.benchmarks.ex06_amdahl --cpu-placeholder PATH`` writes the CPU
stand-in profile the checks use until the H200 file exists (profiles only, CPU self times).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from grader.exercises._shared import model, profiling
from grader.exercises.ex06_amdahl.amdahl import amdahl, captured, ceiling
from grader.exercises.ex06_amdahl.block_measurement import measure_block
from grader.exercises.ex06_amdahl.spec import minimum_bytes

#: (sequence length, batch): the same 16384 tokens at both lengths, so the linear layers do the
#: same work and only attention's S² part grows. At S = 2048 the fp32 scores are 1.07 GB.
SHAPES = ((256, 64), (2048, 8))


def solution_softmax():
    """The course's exercise-3 softmax, or a clear error when it is not there."""
    try:
        from solutions.ex03_softmax import softmax
    except ImportError as exc:
        raise RuntimeError("exercise 6's benchmark swaps in solutions/ex03_softmax.py (`softmax(x)` on 2-D rows), "
                           f"which could not be imported: {exc}") from exc
    return softmax


def amdahl_row(measured: dict, softmax_source: str) -> dict:
    """One benchmark row from `measure_block`'s numbers, with the law's prediction beside the measurement."""
    from tools.benchmarks import ceiling_gbps

    f = profiling.softmax_share(measured["profile"])
    s = measured["local_speedup"]
    predicted = amdahl(f, s)
    top = ceiling(f)
    rows, cols = measured["softmax_shape"]
    nbytes = minimum_bytes(rows, cols, 4)
    swapped_gbps = nbytes / (measured["softmax_ms_swapped"] * 1e-3) / 1e9
    torch_gbps = nbytes / (measured["softmax_ms_torch"] * 1e-3) / 1e9
    largest = profiling.largest(measured["profile"])
    largest_after = profiling.largest(measured["profile_swapped"])
    return {
        "kernel": "block",
        **{k: measured[k] for k in ("seq_len", "batch", "d_model", "n_heads", "mlp_ratio", "dtype", "softmax_shape")},
        "ms": measured["ms"], "ms_swapped": measured["ms_swapped"], "ms_runs": measured["ms_runs"],
        "softmax_source": softmax_source, "softmax_kernels": measured["softmax_kernels"],
        "softmax_ms_torch": measured["softmax_ms_torch"], "softmax_ms_swapped": measured["softmax_ms_swapped"],
        "softmax_ms_runs": measured["softmax_ms_runs"],
        "softmax_bytes": nbytes, "softmax_gbps_torch": round(torch_gbps, 1), "softmax_gbps_swapped": round(swapped_gbps, 1),
        "softmax_fraction_of_ceiling_swapped": round(swapped_gbps / ceiling_gbps(), 4),
        "softmax_fraction": round(f, 5),
        "local_speedup": s,
        "predicted_speedup": round(predicted, 5),
        "measured_speedup": measured["measured_speedup"],
        "prediction_error": round(predicted / measured["measured_speedup"] - 1, 5),
        "ceiling": round(top, 5),
        "captured": None if (share := captured(measured["measured_speedup"], top)) is None else round(share, 4),
        "largest_operator": largest["name"],
        "largest_operator_fraction": round(largest["device_time_us"] / profiling.total_us(measured["profile"]), 5),
        "largest_operator_swapped": largest_after["name"],
        "largest_operator_swapped_fraction": round(
            largest_after["device_time_us"] / profiling.total_us(measured["profile_swapped"]), 5),
        "softmax_fraction_swapped": round(
            profiling.softmax_share(measured["profile_swapped"], measured["softmax_kernels"]), 5),
        "busy_fraction": measured["busy_fraction"],
        "softmax_error": measured["softmax_error"], "block_error": measured["block_error"],
        "profile": measured["profile"], "profile_swapped": measured["profile_swapped"],
    }


def run() -> list[dict]:
    softmax = solution_softmax()
    rows = []
    for seq, batch in SHAPES:
        measured = measure_block(softmax, seq=seq, batch=batch)
        if measured["softmax_error"] > 1e-4 or measured["block_error"] > 1e-3:
            raise RuntimeError(f"solutions/ex03_softmax.py disagrees with torch.softmax at seq {seq}: softmax error "
                               f"{measured['softmax_error']:.2e}, block error {measured['block_error']:.2e}")
        rows.append(amdahl_row(measured, "solutions/ex03_softmax.py"))
        torch.cuda.empty_cache()
    return rows


def cpu_placeholder(path: str, shapes=((256, 1), (2048, 1)), iterations: int = 2) -> dict:
    """Profiles of the block on this CPU (self CPU time per operator), in the H200 file's format."""
    import triton

    rows = []
    for seq, batch in shapes:
        block = model.make_block()
        x = torch.randn(batch, seq, model.D_MODEL, generator=torch.Generator().manual_seed(0))
        profile = profiling.profile_block(block, x, iterations=iterations, warmup=1)
        largest = profiling.largest(profile)
        rows.append({
            "kernel": "block", "seq_len": seq, "batch": batch, "d_model": model.D_MODEL, "n_heads": model.N_HEADS,
            "mlp_ratio": model.MLP_RATIO, "dtype": "float32",
            "softmax_fraction": round(profiling.softmax_share(profile), 5),
            "largest_operator": largest["name"],
            "profile": profile,
        })
    record = {
        "meta": {
            "gpu": None, "device": "cpu", "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d"),
            "command": f"python -m tools.benchmarks.ex06_amdahl --cpu-placeholder {path}",
            "note": ("CPU PLACEHOLDER, not a GPU measurement: device_time_us is each operator's self CPU time. "
                     "It stands in for docs/measurements/h200-ex06-*.json (python -m tools.benchmarks "
                     "ex06_amdahl on the H200) so exercise 6's profile-reading checks can be developed; "
                     "no predicted or measured speedup, no swapped profile."),
        },
        "rows": rows,
    }
    with open(path, "w") as out:
        json.dump(record, out, indent=1)
        out.write("\n")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmarks.ex06_amdahl")
    parser.add_argument("--cpu-placeholder", metavar="PATH", required=True,
                        help="write the CPU stand-in profile to PATH (on a GPU, use python -m tools.benchmarks ex06_amdahl)")
    args = parser.parse_args(argv)
    record = cpu_placeholder(args.cpu_placeholder)
    for row in record["rows"]:
        print(f"seq {row['seq_len']}: softmax {row['softmax_fraction']:.1%} of CPU time, largest {row['largest_operator']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
