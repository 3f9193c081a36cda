"""
Exercise 6 · Amdahl's Law — reference solution
==============================================

In this exercise you will learn:

* **Amdahl's Law**: when a fraction ``f`` of the run time gets ``s`` times faster, the
  rest (``1 - f``) still takes its time, so the whole becomes ``1 / ((1 - f) + f / s)``
  times faster, and never more than the **ceiling** ``1 / (1 - f)``, however fast the
  part gets;
* to **read a profile**: the fraction that matters is a part's share of the *device*
  time of the whole pass, summed over every row that belongs to it;
* to **predict before you optimize**, then measure: on a GPU the grader profiles a
  transformer block, swaps in your exercise-3 softmax, and checks your prediction
  against the real end-to-end speedup.

A profile (what ``grader.exercises._shared.profiling.profile_block`` returns) is a
list of rows, in any order::

    {"name": "aten::_softmax", "calls": 1, "device_time_us": 612.5}

``device_time_us`` is the GPU time of one forward pass spent in that operator (or, for a
Triton kernel launched from Python, in that kernel). The rows partition the pass: their
sum is the total.

The worked example the checks use: softmax is f = 0.21 of the time and becomes s = 1.49x
faster, so the pass becomes 1.074x faster, 27.9% of the 1.266x ceiling. The H200's own
profile of exercise 6's block is docs/measurements/h200-ex06-amdahl.json
(softmax_fraction, local_speedup, predicted_speedup and measured_speedup per sequence
length).
"""

from __future__ import annotations

import math


def amdahl_speedup(f: float, s: float) -> float:
    """End-to-end speedup when a fraction ``f`` of the time becomes ``s`` times faster.

    ``f`` is in [0, 1]; ``s > 0`` (``s < 1`` is a slowdown; ``s = math.inf`` makes the
    part free).
    """
    _check_fraction(f)
    if not s > 0:  # also rejects NaN
        raise ValueError(
            f"s = {s}: a speedup must be positive (s < 1 is a slowdown, s = 1 no "
            "change)"
        )
    # New time, as a fraction of the old: the untouched part, plus the part that got s
    # times faster.
    new_time = (1.0 - f) + f / s
    # f = 1 and s = inf: the whole run became free.
    return math.inf if new_time == 0 else 1.0 / new_time


def amdahl_ceiling(f: float) -> float:
    """The most any speedup of a fraction ``f`` can give: ``1 / (1 - f)`` (the part
    takes no time)."""
    _check_fraction(f)
    # When the part is all of the time, there is no bound: math.inf, not a
    # ZeroDivisionError.
    return math.inf if f == 1 else 1.0 / (1.0 - f)


def is_softmax(name: str) -> bool:
    """PyTorch's ``aten::_softmax`` (and ``aten::softmax``), its CUDA kernels
    (``cunn_SoftMaxForward``, ``softmax_warp_forward``) and a Triton ``softmax_kernel``
    all say "softmax", in some case."""
    return "softmax" in name.lower()


def softmax_fraction(profile: list[dict]) -> float:
    """The share of the profile's total device time spent in softmax rows (a fraction, 0
    to 1)."""
    total = sum(row["device_time_us"] for row in profile)
    # Every softmax row counts (a profile can hold more than one), and the denominator
    # is the whole pass, softmax included: f is a share of the time you are trying to
    # shorten.
    softmax = sum(row["device_time_us"] for row in profile if is_softmax(row["name"]))
    return softmax / total


def largest_operator(profile: list[dict]) -> str:
    """Name of the row with the most device time: where the next optimization pays the
    most."""
    # Rows may come in any order; most calls is not most time.
    return max(profile, key=lambda row: row["device_time_us"])["name"]


def predict_speedup(profile: list[dict], softmax_speedup: float) -> float:
    """End-to-end speedup of the profiled pass when its softmax becomes
    ``softmax_speedup`` times faster."""
    return amdahl_speedup(softmax_fraction(profile), softmax_speedup)


def _check_fraction(f: float) -> None:
    if not 0 <= f <= 1:  # also rejects NaN
        raise ValueError(
            f"f = {f}: a fraction of the run time lies between 0 and 1 (is it a "
            "percentage?)"
        )
