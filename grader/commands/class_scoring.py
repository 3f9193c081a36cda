"""Partial credit, the leaderboard value and ranks of a class: what `grade batch` and its report share.

A check belongs to a family (`grader.catalogue.Grading.family`: correctness, lessons, performance).
Each family that has a check that counts earns its weight times the share of its checks that passed;
the weights of the families present are scaled to the submission's points, so a family with no check
that counts (performance in Triton's interpreter) leaves its weight to the others in proportion.
One check is worth ``points × weight / (sum of the present families' weights) / (checks in its family)``.

Ranks order a class by score, then by the leaderboard's fraction: a file's rank is one more than the
number of files that did clearly better (a higher score, or the same score and a fraction more than the
exercise's ``rank_margin`` above its own), so files within the margin of each other share a rank
(1, 1, 3). Without a GPU there are no fractions: ranks come from the scores alone, which depend on the
seed and the files only, so a second batch with the same seed ranks the class the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from grader.catalogue import Grading


def credit_per_check(families: Iterable[str], grading: Grading, points: float) -> dict[str, float]:
    """What one check of each family is worth, given the families of the checks that count."""
    counts: dict[str, int] = {}
    for family in families:
        counts[family] = counts.get(family, 0) + 1
    present = {f: grading.weights.get(f, 0.0) for f in counts}
    total = sum(present.values())
    if total <= 0:  # only families weighted 0 ran: nothing can earn credit
        return {f: 0.0 for f in counts}
    return {f: points * present[f] / total / counts[f] for f in counts}


def score(checks: Iterable, grading: Grading, points: float) -> float:
    """The score of the checks that count (objects with ``name``, ``passed``), out of ``points``."""
    checks = list(checks)
    credit = credit_per_check((grading.family(c.name) for c in checks), grading, points)
    return round(sum(credit[grading.family(c.name)] for c in checks if c.passed), 2)


def shares(checks: Iterable, grading: Grading, points: float) -> dict[str, float]:
    """Each present family's share of ``points`` (what a fully passing family earns): for the sentence that
    tells a learner how the grade was made."""
    checks = list(checks)
    credit = credit_per_check((grading.family(c.name) for c in checks), grading, points)
    found: dict[str, float] = {}
    for c in checks:
        family = grading.family(c.name)
        found[family] = found.get(family, 0.0) + credit[family]
    return {f: round(found[f], 2) for f in sorted(found, key=lambda f: (-found[f], f))}


def leaderboard_value(mode: str | None, performance: dict | None) -> float | None:
    """The fraction a leaderboard shows, or None: only a GPU run measures one (the interpreter times Python)."""
    if mode != "gpu" or not performance:
        return None
    fraction = performance.get("fraction")
    return round(float(fraction), 4) if isinstance(fraction, (int, float)) else None


@dataclass(frozen=True)
class Standing:
    """One file's place in its class."""

    name: str
    score: float
    fraction: float | None = None


def ranks(standings: Iterable[Standing], margin: float) -> dict[str, int]:
    """Competition ranks (1, 1, 3): one more than the number of files that did clearly better, that is
    with a higher score, or the same score and a fraction more than ``margin`` above this file's (a file
    with a fraction beats one without).

    Not groups led by their first file: with groups, a leader that moves by a point can split its group
    and move files it never passed. Two batches of exercise 1's five correct files on the H200
    (docs/measurements/h200-class-rank-noise.json) ranked alike with groups at a margin of 2.5 and 3
    points but not at 3.5; counted this way they rank alike at every margin from 4 points up."""
    listed = list(standings)
    return {s.name: 1 + sum(1 for other in listed if _better(other, s, margin)) for s in listed}


def _better(one: Standing, other: Standing, margin: float) -> bool:
    """Whether ``one`` did clearly better than ``other``."""
    if one.score != other.score:
        return one.score > other.score
    if one.fraction is None or other.fraction is None:
        return one.fraction is not None and other.fraction is None
    return one.fraction > other.fraction + margin + 1e-12
