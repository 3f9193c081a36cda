"""GPU benchmarks behind the committed measurements in docs/measurements/.

Each module here (``tools.benchmarks.ex01_vector_add``, ...) defines ``run() -> list[dict]``:
one row per (kernel, shape), built with `time_row`. The driver runs the modules you name and
writes one JSON file per module with the GPU, versions and date:

    python -m tools.benchmarks ex01_vector_add ex03_softmax --out docs/measurements

Every figure on the site comes from such a file, so a learner can rerun the same command on
their own card and plot their own numbers (docs/scripts/plot_measurements.py).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

import torch

from grader import bandwidth


def meta() -> dict:
    """Where and when: the GPU, its driver, the versions, the measured ceiling, and ``run``, the UTC time
    the header was made. One driver call writes every file with one header, so files whose ``run``
    agree were measured in one process, one after the other (a plot that compares them may)."""
    import triton

    info = bandwidth.gpu_info()
    ceiling, _ = bandwidth.measure_ceiling()
    return {
        "run": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": info.name,
        "driver": info.driver,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "date": time.strftime("%Y-%m-%d"),
        "sm_count": info.sm_count,
        "l2_bytes": info.l2_bytes,
        "ceiling_gbps": round(ceiling.ceiling_gbps, 1),
        "copy_gbps": round(ceiling.copy_gbps, 1),
        "add_gbps": round(ceiling.add_gbps, 1),
        "spec_gbps": None if (spec := bandwidth.spec_peak_gbps()) is None else round(spec, 1),
    }


def file_prefix(header: dict) -> str:
    """The results files' name prefix for a GPU: ``NVIDIA H200`` -> ``h200``."""
    return header["gpu"].lower().replace("nvidia", "").strip().replace(" ", "-")


def ceiling_gbps() -> float:
    return bandwidth.measure_ceiling()[0].ceiling_gbps


def time_row(kernel: str, fn: Callable[[], object], nbytes: int | None, *, flops: float | None = None,
             rep_ms: int = 100, **shape) -> dict:
    """Time ``fn`` twice (median of many runs each, L2 flushed) and describe it as one row.

    ``nbytes`` is the exercise's minimum byte model for this shape (None where it does not
    apply); ``flops`` gives TFLOP/s for compute-bound kernels. Both runs are kept so the noise
    is visible; ``ms`` is the better of the two medians.
    """
    first = bandwidth.time_ms(fn, rep_ms=rep_ms)
    second = bandwidth.time_ms(fn, rep_ms=rep_ms)
    ms = min(first, second)
    row = {"kernel": kernel, **shape, "ms": round(ms, 5), "ms_runs": [round(first, 5), round(second, 5)]}
    if nbytes is not None:
        achieved = bandwidth.gbps(nbytes, ms)
        row.update(bytes=nbytes, gbps=round(achieved, 1), fraction=round(achieved / ceiling_gbps(), 4))
    if flops is not None:
        row["tflops"] = round(flops / (ms * 1e-3) / 1e12, 1)
    return row


def time_rows_in_turns(kernels: dict[str, Callable[[], object]], *, flops: float | None = None, rounds: int = 3,
                       rep_ms: int = 100, **shape) -> dict[str, dict]:
    """One row per kernel from `bandwidth.time_in_turns` (why turns: see there). ``ms`` is the median
    of the kernel's rounds; every round is kept in ``ms_runs``."""
    rows = {}
    for name, times in bandwidth.time_in_turns(kernels, rounds=rounds, rep_ms=rep_ms).items():
        ms = statistics.median(times)
        rows[name] = {"kernel": name, **shape, "ms": round(ms, 5), "ms_runs": [round(t, 5) for t in times]}
        if flops is not None:
            rows[name]["tflops"] = round(flops / (ms * 1e-3) / 1e12, 1)
    return rows


def failed_row(kernel: str, exc: BaseException, **shape) -> dict:
    """A row for a kernel that could not run at this shape (kept: the failure is a finding too)."""
    return {"kernel": kernel, **shape, "ms": None, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
