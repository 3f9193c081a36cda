"""Amdahl's Law as the grader computes it: the reference for exercise 6's formulas and the
benchmark that records the block's speedups (tools/benchmarks/ex06_amdahl.py)."""

from __future__ import annotations

import math


def amdahl(f: float, s: float) -> float:
    """The grader's own Amdahl: 1 / ((1 - f) + f / s)."""
    new_time = (1.0 - f) + f / s
    return math.inf if new_time == 0 else 1.0 / new_time


def ceiling(f: float) -> float:
    return math.inf if f >= 1 else 1.0 / (1.0 - f)


def captured(speedup: float, ceiling_value: float) -> float | None:
    """Share of the ceiling's gain a speedup captured: (S - 1) / (S_inf - 1)."""
    if not math.isfinite(ceiling_value) or ceiling_value <= 1:
        return None
    return (speedup - 1.0) / (ceiling_value - 1.0)
