"""
Exercise 6 · Amdahl's Law: profile, predict, then measure
=========================================================

In this exercise you will learn:

* **Amdahl's Law**: when a fraction ``f`` of the run time gets ``s`` times faster, the
  rest (``1 - f``) still takes its time. How much faster does the whole get, and what is
  the most it could ever get, however fast the part becomes?
* to **read a profile**: which rows are softmax, what share of the device time they
  hold, and which operator is the largest;
* to **predict before you optimize**, then measure: on a GPU the grader profiles a
  transformer block, swaps in your exercise-3 softmax, and checks your prediction
  against the real end-to-end speedup.

No kernel this time: five small Python functions. Fill in the TODOs, then run
``grade exercise 6``. ``grade hint 6`` gives a hint when you are stuck.

A profile (what ``grader.exercises._shared.profiling.profile_block`` returns) is a
list of rows, in any order::

    {"name": "aten::_softmax", "calls": 1, "device_time_us": 612.5}

``device_time_us`` is the GPU time of one forward pass spent in that operator (or, for a
Triton kernel launched from Python, in that kernel: its row is named after your
``@triton.jit`` function). The rows partition the pass: their sum is the total. A row is
softmax when its name contains "softmax" in any case: ``aten::_softmax``,
``softmax_kernel``, ...

The worked example the checks use: softmax is f = 0.21 of a forward pass and becomes s =
1.49x faster, so the pass becomes 1.074x faster, 27.9% of the 1.266x ceiling.
"""

from __future__ import annotations

import math  # noqa: F401  (math.inf is the ceiling when the part is all of the time)


def amdahl_speedup(f: float, s: float) -> float:
    """End-to-end speedup when a fraction ``f`` of the time becomes ``s`` times faster.

    ``f`` must be in [0, 1] and ``s`` positive (``s < 1`` is a slowdown, ``s =
    math.inf`` makes the part free); anything else raises ``ValueError`` with a sentence
    saying why.
    """
    # TODO: reject impossible f and s; write the new time as a fraction of the old one
    # (the part that is untouched, plus the part that got s times faster), and return
    # old / new.
    raise NotImplementedError("exercise 6: write amdahl_speedup(f, s)")


def amdahl_ceiling(f: float) -> float:
    """The most any speedup of a fraction ``f`` can give (the part takes no time at
    all).

    ``ValueError`` for ``f`` outside [0, 1]; ``math.inf`` when ``f == 1``.
    """
    # TODO: the limit of amdahl_speedup(f, s) as s grows without bound.
    raise NotImplementedError("exercise 6: write amdahl_ceiling(f)")


def softmax_fraction(profile: list[dict]) -> float:
    """The share of the profile's total device time spent in softmax rows: a fraction, 0
    to 1."""
    # TODO: add up the device time of every softmax row, and divide by the device time
    # of all rows.
    raise NotImplementedError("exercise 6: write softmax_fraction(profile)")


def largest_operator(profile: list[dict]) -> str:
    """Name (a str) of the row with the most device time."""
    # TODO: rows come in any order.
    raise NotImplementedError("exercise 6: write largest_operator(profile)")


def predict_speedup(profile: list[dict], softmax_speedup: float) -> float:
    """End-to-end speedup of the profiled pass when its softmax becomes
    ``softmax_speedup`` times faster."""
    # TODO: combine two of the functions above.
    raise NotImplementedError(
        "exercise 6: write predict_speedup(profile, softmax_speedup)"
    )
