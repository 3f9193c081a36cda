"""On a GPU: what a process's first kernel launch pays once, paid before the judge's first request.

A fresh Python that has imported torch took 0.8 s on an H100 to import Triton and run a first kernel from a
warm Triton cache, and 1.5 s with CUPTI starting in a thread beside it, as it does in the learner's process
(`grader.learner.kernel_trace`): the CUDA context, Triton's key of its own sources (a hash of its compiler's
files and of libtriton, about 500 MB, which every first compile of a process computes, even when the cache
holds the kernel) and Triton's driver helpers. In a grading of exercise 1 the learner's process had imported
the file about 0.9 s before the judge asked for its first result, and the first check then took 1.5-1.6 s
(``stages`` and ``timeline`` of docs/measurements/h100-grading-startup.json). Paid in that wait, they leave
the first check the compile's cache lookup and the launch.

Each step is one the first launch would take anyway, in the same process; a step that fails is left to the
first check, which then says what is wrong. The tools are taken before the learner's file is imported
(`take`), so a file that replaces torch's or Triton's names at import does not replace these.
"""

from __future__ import annotations

import time
from typing import Callable

#: (name, step) in order, taken by `take` before the learner's file is imported.
_STEPS: list[tuple[str, Callable[[], object]]] = []


def take(torch) -> None:
    """Hold the steps: the CUDA context (a one-element allocation), Triton's key and its driver's helpers."""
    _STEPS.clear()
    empty = torch.empty
    _STEPS.append(("cuda_context", lambda: empty(1, device="cuda")))
    try:
        from triton.runtime import cache, driver
    except Exception:  # noqa: BLE001 - a Triton without these names: the first launch pays for them
        return
    _STEPS.append(("triton_key", cache.triton_key))
    _STEPS.append(("triton_driver", lambda: driver.active.utils))  # `driver` is Triton's DriverConfig


def run() -> dict[str, float | str]:
    """Run the steps taken: ``{step: seconds}``, or ``"failed: <exception>"`` for a step that failed. The steps
    after a failed CUDA context are not run (nothing to warm without a GPU)."""
    done: dict[str, float | str] = {}
    for name, step in _STEPS:
        started = time.monotonic()
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - left to the first check, which reports it to the learner
            done[name] = f"failed: {type(exc).__name__}"
            if name == "cuda_context":
                break
            continue
        done[name] = round(time.monotonic() - started, 3)
    return done
