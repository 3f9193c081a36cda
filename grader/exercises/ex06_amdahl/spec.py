"""Checks for exercise 6, Amdahl's Law: ``amdahl_speedup``, ``amdahl_ceiling``, ``softmax_fraction``,
``largest_operator`` and ``predict_speedup`` (the manifest's function, the one the exercise builds up to).

Three parts:

1. **The formulas** on hand-computed cases: the worked example (f = 0.21, s = 1.49 -> 1.074x,
   ceiling 1.266x, 27.9% of the ceiling captured), f = 0, s = 1, f = 1, f -> 1, a slowdown
   (s < 1), an infinitely fast part (s = inf gives the ceiling), and impossible inputs that must
   raise ``ValueError``.
2. **Reading a profile**, on every machine: the rows of a real profile of the course's
   transformer block (`grader.exercises._shared.model`), recorded on the H200 by `tools.benchmarks.ex06_amdahl`
   and shipped in ``docs/measurements/h200-ex06-*.json``. Until that file is committed, a CPU
   placeholder (``docs/measurements/cpu-placeholder-ex06-profile.json``, CPU self times) stands in,
   and every message says which one was read. Plus a hand-made profile with two softmax rows in
   no particular order.
3. **Measure** (``test_performance``, GPU only): the grader profiles the block itself at sequence
   length 2048, swaps in your exercise-3 softmax (``exercises/ex03_softmax.py`` once you have
   passed exercise 3, else the course's ``solutions/ex03_softmax.py``; the verdict says which),
   measures its local speedup on the block's score rows and the real end-to-end speedup, and
   passes when your prediction is within `PREDICTION_TOLERANCE` of the measurement.

Why 5%: the prediction rests on three timings (torch.softmax alone, your softmax alone, and the
profile's fractions) and is compared with two more (the block with each softmax). Each median
moves by about 1% between runs (two runs of one kernel on the H200 differed by <1%), the GPU's
idle gaps between kernels (a few µs per launch, 1-2% of a ~5 ms pass) are in the measured pass but
not in the profile's kernel time, and a softmax timed alone, with the L2 flushed, need not run
exactly as fast between two GEMMs. The sensitivity of the prediction to an error in s is small
(at f = 0.21, s = 1.49, a 10% error in s moves the prediction by 1.5%). 5% covers these with room
and still rejects every answer that is not Amdahl's: the local speedup itself (1.49x against 1.074x)
and the ceiling (1.266x) are 39% and 17.9% away.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest
import torch

from grader import catalogue, plan
from grader.exercises._shared import model, profiling
from grader.judge import checks
from grader.exercises.ex06_amdahl.amdahl import amdahl, captured, ceiling
from grader.wire.failures import GradeFailure
from grader.wire.results import Kind

FUNCTIONS = ("amdahl_speedup", "amdahl_ceiling", "softmax_fraction", "largest_operator", "predict_speedup")

#: The worked example every check uses: softmax a fraction 0.21 of the pass, made 1.49x faster.
SEED_F, SEED_S = 0.21, 1.49
SEED_SPEEDUP, SEED_CEILING, SEED_CAPTURED = 1.074, 1.266, 0.279

#: Relative tolerance on a formula: they are exact arithmetic, this only absorbs rounding.
FORMULA_RTOL = 1e-6
#: A fraction read from a profile must match the grader's reading to 0.1 percentage point.
FRACTION_ATOL = 1e-3
#: The end-to-end prediction must be within 5% (relative) of the measured speedup (module docstring).
PREDICTION_TOLERANCE = 0.05
#: The sequence length graded on a GPU (softmax is a large fraction there) and its largest batch.
GPU_SEQ, GPU_MAX_BATCH = 2048, 8

MEASUREMENTS = catalogue.ROOT / "docs" / "measurements"
PLACEHOLDER = MEASUREMENTS / "cpu-placeholder-ex06-profile.json"


def minimum_bytes(rows: int, cols: int, element_size: int) -> int:
    """Fewest bytes a softmax of the (rows, cols) score matrix can move: read it once, write it once."""
    return 2 * rows * cols * element_size


# --- 1. The formulas --------------------------------------------------------------------------

# (id, f, s, expected): expected values worked out by hand, to 10 significant digits.
SPEEDUP_CASES = [
    ("seed", 0.21, 1.49, 1.074183548),   # 1 / (0.79 + 0.21/1.49) = 1 / 0.9309396
    ("seq256", 0.07, 1.49, 1.023562547),  # 1 / (0.93 + 0.07/1.49) = 1 / 0.9769799
    ("f0", 0.0, 5.0, 1.0),                # nothing sped up: no gain, whatever s is
    ("s1", 0.6, 1.0, 1.0),                # no local gain: no gain
    ("f1", 1.0, 3.0, 3.0),                # all of the time sped up: the whole gets s
    ("half_twice", 0.5, 2.0, 1.333333333),  # 1 / (0.5 + 0.25)
    ("slowdown", 0.5, 0.5, 0.6666666667),   # 1 / (0.5 + 1.0): a "faster" kernel that is slower
    ("f_near_1", 0.999, 1000.0, 500.2501251),  # 1 / (0.001 + 0.000999)
    ("s_inf", 0.21, math.inf, 1.265822785),    # a free part: the ceiling 1 / 0.79
]

CEILING_CASES = [
    ("seed", 0.21, 1.265822785),
    ("seq256", 0.07, 1.075268817),
    ("f0", 0.0, 1.0),
    ("half", 0.5, 2.0),
    ("f09", 0.9, 10.0),
    ("f_near_1", 0.999, 1000.0),
    ("f1", 1.0, math.inf),
]

# (id, function, args, why it is impossible)
IMPOSSIBLE_CASES = [
    ("f_negative", "amdahl_speedup", (-0.1, 1.5), "f is a fraction of the run time, between 0 and 1"),
    ("f_percent", "amdahl_speedup", (21.0, 1.49), "f is a fraction between 0 and 1, and 21 looks like a percentage"),
    ("s_zero", "amdahl_speedup", (0.5, 0.0), "s = 0 would mean the part takes forever: a speedup is positive"),
    ("s_negative", "amdahl_speedup", (0.5, -2.0), "a speedup is positive (s < 1 is a slowdown)"),
    ("ceiling_f_negative", "amdahl_ceiling", (-0.1,), "f is a fraction of the run time, between 0 and 1"),
    ("ceiling_f_above_1", "amdahl_ceiling", (1.5,), "f is a fraction of the run time, between 0 and 1"),
]


def _function(learner, name: str) -> Callable:
    fn = getattr(learner, name, None)
    if not callable(fn):
        raise GradeFailure(f"your file does not define `{name}`: keep the five functions the stub defines "
                           f"({', '.join(FUNCTIONS)})")
    return fn


def _fmt(x: float) -> str:
    return "inf" if x == math.inf else f"{x:.4g}"


def _call(fn: Callable, args: tuple, label: str) -> Any:
    """Call the learner's function; an exception becomes a sentence naming the call.

    Profiles are handed over as copies: a learner may sort the rows in place, and the next check
    must still see them in their original order.
    """
    try:
        return fn(*args)
    except GradeFailure as failure:  # the learner's exception, already a sentence
        if failure.kind == Kind.NOT_IMPLEMENTED:
            raise  # the plugin says "not implemented yet" and stops: every other check would say the same
        raise GradeFailure(f"{label}: {failure}", kind=failure.kind) from None


def _number(value: Any, label: str) -> float:
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise GradeFailure(f"{label} returned {value!r}: return a number (a float)")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise GradeFailure(f"{label} returned {type(value).__name__} {value!r}: return a number (a float)") from None


def _close(got: float, expected: float, rtol: float = FORMULA_RTOL) -> bool:
    if math.isinf(expected) or math.isinf(got):
        return got == expected
    return math.isclose(got, expected, rel_tol=rtol, abs_tol=1e-12)


def speedup_mistake(f: float, s: float, got: float) -> str:
    """Name the line of thought behind a wrong amdahl_speedup(f, s)."""
    expected = amdahl(f, s)
    slower = (1 - f) + f * s
    forms = [
        (1 / slower if slower else math.inf,
         "did you multiply f by s? The part that gets s times faster takes f / s of the old time, not f · s; "
         "the unchanged part (1 − f) still takes its time"),
        (f * s, "did you multiply s by f? That is not the speedup of the whole: the unchanged part (1 − f) "
                "still takes its time, so the new time is (1 − f) + f / s and the speedup is 1 over that"),
        ((1 - f) + f / s, "that is the new time as a fraction of the old one; the speedup is old time / new time"),
        (slower, "a weighted average of speedups, (1 − f) + f · s? Times add, speedups do not: add the times "
                 "(1 − f) + f / s and take 1 over the sum"),
        (s, "that is the part's own speedup s; the whole gets less, because the rest (1 − f) did not speed up"),
        (ceiling(f), "that is the ceiling 1 / (1 − f), for an infinitely fast part; with a finite s the part "
                     "still takes f / s of the old time"),
    ]
    for value, hint in forms:
        if math.isfinite(value) and _close(got, value, 1e-4) and not _close(value, expected, 1e-4):
            return hint
    return "the whole becomes 1 / ((1 − f) + f / s) times faster"


def ceiling_mistake(f: float, got: float) -> str:
    if f == 1:
        return "when the part is all of the time, nothing bounds the speedup: return math.inf"
    for value, hint in [(1 - f, "that is the time left, 1 − f; the ceiling is one over it"),
                        (1 / f if f else math.inf, "1 / f? The ceiling is one over the part that stays: 1 / (1 − f)"),
                        (f, "that is f itself; the ceiling is 1 / (1 − f)")]:
        if math.isfinite(value) and _close(got, value, 1e-4):
            return hint
    return "an infinitely fast part leaves the rest, 1 − f, so the ceiling is 1 / (1 − f)"


@pytest.mark.parametrize("case", SPEEDUP_CASES, ids=[c[0] for c in SPEEDUP_CASES])
def test_amdahl_speedup(learner, case):
    _, f, s, expected = case
    label = f"amdahl_speedup({f:g}, {s:g})"
    got = _number(_call(_function(learner, "amdahl_speedup"), (f, s), label), label)
    checks.require(_close(got, expected), f"{label} returned {_fmt(got)}, expected {_fmt(expected)}: "
                                          f"{speedup_mistake(f, s, got)}")


@pytest.mark.parametrize("case", CEILING_CASES, ids=[c[0] for c in CEILING_CASES])
def test_amdahl_ceiling(learner, case):
    _, f, expected = case
    label = f"amdahl_ceiling({f:g})"
    fn = _function(learner, "amdahl_ceiling")
    if f == 1:
        try:
            value = fn(f)
        except GradeFailure as failure:  # the learner's exception, as a sentence and a class name
            if failure.raised == "ZeroDivisionError":
                raise GradeFailure(f"{label} raised ZeroDivisionError: when the part is all of the time, an "
                                   "infinitely fast part makes the whole free and nothing bounds the speedup: "
                                   "return math.inf") from None
            if failure.kind == Kind.NOT_IMPLEMENTED:
                raise
            raise GradeFailure(f"{label}: {failure}", kind=failure.kind) from None
    else:
        value = _call(fn, (f,), label)
    got = _number(value, label)
    checks.require(_close(got, expected), f"{label} returned {_fmt(got)}, expected {_fmt(expected)}: "
                                          f"{ceiling_mistake(f, got)}")


@pytest.mark.parametrize("case", IMPOSSIBLE_CASES, ids=[c[0] for c in IMPOSSIBLE_CASES])
def test_rejects_impossible_input(learner, case):
    _, name, args, why = case
    label = f"{name}({', '.join(f'{a:g}' for a in args)})"
    fn = _function(learner, name)
    try:
        value = fn(*args)
    except GradeFailure as failure:  # the learner's exception, as a sentence and a class name
        if failure.raised == "ValueError":
            return
        if failure.kind == Kind.NOT_IMPLEMENTED:
            raise
        raise GradeFailure(f"{label} raised {failure.raised or 'an error'} instead of ValueError: check the inputs "
                           f"before computing ({why})") from None
    raise GradeFailure(f"{label} returned {value!r} instead of raising ValueError: {why}")


def test_seed_reasoning(learner):
    """The worked example through the learner's own functions: 1.074x, 1.266x, 27.9% captured."""
    speedup = _number(_call(_function(learner, "amdahl_speedup"), (SEED_F, SEED_S), "amdahl_speedup(0.21, 1.49)"),
                      "amdahl_speedup(0.21, 1.49)")
    top = _number(_call(_function(learner, "amdahl_ceiling"), (SEED_F,), "amdahl_ceiling(0.21)"), "amdahl_ceiling(0.21)")
    share = captured(speedup, top)
    checks.require(
        round(speedup, 3) == SEED_SPEEDUP and round(top, 3) == SEED_CEILING and share is not None
        and round(share, 3) == SEED_CAPTURED,
        f"with f = 0.21 and s = 1.49 your functions give {_fmt(speedup)}x end to end and a ceiling "
        f"of {_fmt(top)}x ({'no' if share is None else f'{share:.1%}'} share of the ceiling's gain captured); "
        f"Amdahl's law gives 1.074x, 1.266x and 27.9%",
    )


# --- 2. Reading a profile ---------------------------------------------------------------------

#: A hand-made profile (µs per pass) of a decoder layer with two attentions: the cross-attention
#: still uses PyTorch's softmax, the self-attention a Triton `softmax_kernel`. Rows are not sorted,
#: the row with the most calls is not the largest, and there are two softmax rows.
MIXED_PROFILE = [
    {"name": "aten::native_layer_norm", "calls": 3, "device_time_us": 61.0},
    {"name": "aten::_softmax", "calls": 1, "device_time_us": 118.0},
    {"name": "aten::copy_", "calls": 12, "device_time_us": 58.0},
    {"name": "aten::bmm", "calls": 4, "device_time_us": 233.0},
    {"name": "aten::addmm", "calls": 8, "device_time_us": 402.0},
    {"name": "softmax_kernel", "calls": 1, "device_time_us": 87.0},
    {"name": "aten::gelu", "calls": 1, "device_time_us": 49.0},
    {"name": "aten::add", "calls": 3, "device_time_us": 40.0},
    {"name": "aten::mul", "calls": 2, "device_time_us": 12.0},
]
MIXED_SOURCE = ("a hand-made profile of a layer with two attentions (PyTorch's aten::_softmax and a Triton "
                "softmax_kernel), rows in no particular order")


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(catalogue.ROOT))
    except ValueError:
        return str(path)


@functools.lru_cache(maxsize=None)
def recorded(folder: Path = MEASUREMENTS) -> tuple[dict, str]:
    """The recorded profile file and a sentence saying where it came from.

    The H200 file (``h200-ex06-*.json``, written by ``python -m tools.benchmarks ex06_amdahl``) when
    the course has one, else the CPU placeholder.
    """
    found = sorted(Path(folder).glob("h200-ex06-*.json"))
    if found:
        path = found[-1]
        record = json.loads(path.read_text())
        meta = record.get("meta", {})
        source = (f"the course's profile recorded on an {meta.get('gpu', 'H200')} (torch {meta.get('torch', '?')}, "
                  f"Triton {meta.get('triton', '?')}, {meta.get('date', 'undated')}; {_relative(path)})")
        return record, source
    path = Path(folder) / PLACEHOLDER.name
    record = json.loads(path.read_text())
    source = (f"a CPU placeholder profile ({_relative(path)}; CPU self times): the H200 profile is not in "
              "the course yet")
    return record, source


def recorded_row(seq_len: int) -> dict:
    record, source = recorded()
    for row in record.get("rows", []):
        if row.get("seq_len") == seq_len and row.get("profile"):
            return row
    raise GradeFailure(f"the recorded profile file has no row for sequence length {seq_len} ({source}): "
                       "the course's data is incomplete, not your code")


def _has_swapped() -> bool:
    try:
        return bool(recorded_row(GPU_SEQ).get("profile_swapped"))
    except (GradeFailure, OSError, ValueError):
        return False


def profile_case(case: str) -> tuple[list[dict], str, str]:
    """(rows, label for messages, where they came from) for a case id."""
    if case == "mixed":
        return MIXED_PROFILE, "the mixed profile", MIXED_SOURCE
    _, source = recorded()
    seq = int(case.removeprefix("seq").removesuffix("_swapped"))
    row = recorded_row(seq)
    if case.endswith("_swapped"):
        return row["profile_swapped"], f"the seq {seq} profile with the course's Triton softmax", source
    return row["profile"], f"the seq {seq} profile", source


PROFILE_CASES = ["seq256", "seq2048", "mixed"]
LARGEST_CASES = PROFILE_CASES + (["seq2048_swapped"] if _has_swapped() else [])


def _describe_rows(rows: list[dict], kernel_names=()) -> str:
    total = profiling.total_us(rows)
    soft = [r for r in rows if profiling.is_softmax(r["name"], kernel_names)]
    listed = ", ".join(f"{r['name']} {r['device_time_us']:.1f} µs" for r in soft) or "none"
    return f"softmax rows: {listed}, of {total:.1f} µs in all"


def fraction_mistake(rows: list[dict], got: float, kernel_names=()) -> str:
    expected = profiling.softmax_share(rows, kernel_names)
    total = profiling.total_us(rows)
    soft_rows = [r for r in rows if profiling.is_softmax(r["name"], kernel_names)]
    soft = sum(r["device_time_us"] for r in soft_rows)
    if expected > 0 and math.isclose(got, 100 * expected, rel_tol=1e-3):
        return f"that is a percentage: return a fraction between 0 and 1 ({expected:.4f})"
    if total > soft and math.isclose(got, soft / (total - soft), rel_tol=1e-3):
        return ("that is softmax's time over the time of everything else; a fraction of the pass divides by "
                "the whole pass, softmax included")
    if len(soft_rows) > 1:
        for row in soft_rows:
            if math.isclose(got, row["device_time_us"] / total, rel_tol=1e-3):
                others = ", ".join(r["name"] for r in soft_rows if r is not row)
                return (f"you counted only `{row['name']}`, but {len(soft_rows)} rows are softmax (also {others}): "
                        "add the time of every softmax row")
    calls_total = sum(r["calls"] for r in rows)
    if calls_total and math.isclose(got, sum(r["calls"] for r in soft_rows) / calls_total, rel_tol=1e-3):
        return "that is softmax's share of the calls; Amdahl's f is its share of the time"
    if abs(got) < 1e-12:
        return "no softmax row found? A row is softmax when its name contains \"softmax\" in any case"
    return "sum the device time of every softmax row and divide by the device time of all rows"


def _fraction(learner, rows: list[dict], label: str) -> float:
    call = f"softmax_fraction({label})"
    return _number(_call(_function(learner, "softmax_fraction"), (copy.deepcopy(rows),), call), call)


def check_fraction(learner, rows: list[dict], label: str, source: str, kernel_names=()) -> float:
    got = _fraction(learner, rows, label)
    expected = profiling.softmax_share(rows, kernel_names)
    checks.require(
        abs(got - expected) <= FRACTION_ATOL,
        f"softmax_fraction({label}) returned {got:.4f}, expected {expected:.4f}: "
        f"{fraction_mistake(rows, got, kernel_names)} ({_describe_rows(rows, kernel_names)}; profile: {source})",
    )
    return got


def largest_mistake(rows: list[dict], got: Any) -> str:
    expected = profiling.largest(rows)
    share = expected["device_time_us"] / profiling.total_us(rows)
    where = f"the row with the most device time is {expected['name']!r} ({expected['device_time_us']:.1f} µs, {share:.1%} of the pass)"
    if got == rows[0]["name"]:
        return f"that is the first row: rows come in any order; {where}"
    if got == max(rows, key=lambda r: r["calls"])["name"]:
        return f"that is the row with the most calls; the largest fraction is the most time: {where}"
    return where


def check_largest(learner, rows: list[dict], label: str, source: str) -> str:
    call = f"largest_operator({label})"
    got = _call(_function(learner, "largest_operator"), (copy.deepcopy(rows),), call)
    if isinstance(got, dict):
        raise GradeFailure(f"{call} returned a whole row: return its name, a str such as 'aten::addmm'")
    checks.require(isinstance(got, str), f"{call} returned {type(got).__name__} {got!r}: return the row's name, a str")
    checks.require(got == profiling.largest(rows)["name"],
                   f"{call} returned {got!r}: {largest_mistake(rows, got)} (profile: {source})")
    return got


def check_prediction(learner_function, rows: list[dict], s: float, label: str, source: str, kernel_names=()) -> float:
    call = f"predict_speedup({label}, {s:.4g})"
    got = _number(_call(learner_function, (copy.deepcopy(rows), s), call), call)
    f = profiling.softmax_share(rows, kernel_names)
    expected = amdahl(f, s)
    if _close(got, expected, 2e-3):
        return got
    if _close(got, s, 1e-4):
        hint = "that is softmax's own speedup; the pass gains less, because the rest of it did not speed up"
    elif _close(got, ceiling(f), 1e-4):
        hint = "that is the ceiling, for an infinitely fast softmax"
    else:
        hint = speedup_mistake(f, s, got)
        if hint == speedup_mistake(f, s, math.nan):  # no known slip in the formula: the fraction, then?
            hint = "predict with amdahl_speedup(softmax_fraction(profile), softmax_speedup)"
    raise GradeFailure(f"{call} returned {_fmt(got)}, expected 1 / ((1 − f) + f / s) = {_fmt(expected)} with "
                       f"f = {f:.4f} read from this profile: {hint} (profile: {source})")


@pytest.mark.parametrize("case", PROFILE_CASES)
def test_softmax_fraction(learner, case):
    rows, label, source = profile_case(case)
    check_fraction(learner, rows, label, source)


@pytest.mark.parametrize("case", LARGEST_CASES)
def test_largest_operator(learner, case):
    rows, label, source = profile_case(case)
    check_largest(learner, rows, label, source)


@pytest.mark.parametrize("case", PROFILE_CASES)
def test_predict_speedup(learner, learner_function, case, check):
    rows, label, source = profile_case(case)
    row = None if case == "mixed" else recorded_row(int(case.removeprefix("seq")))
    s = (row or {}).get("local_speedup") or SEED_S
    predicted = check_prediction(learner_function, rows, s, label, source)
    if case == f"seq{GPU_SEQ}":
        summary = recorded_summary(learner, row, predicted, s, source)
        check.extra["amdahl"] = summary
        check.extra["panel"] = {"title": summary["title"], "lines": summary["lines"]}


# --- The reasoning shown on the result screen -------------------------------------------------

def summary_lines(*, f: float, soft_text: str, s: float, s_text: str, predicted: float, measured: float | None,
                  measured_text: str, top: float, largest_before: str, largest_before_share: float,
                  largest_after: str | None, largest_after_share: float | None, softmax_after: float | None) -> list[str]:
    share = captured(measured if measured is not None else predicted, top)
    lines = [
        f"fraction   f = {f:.1%} of the pass is softmax ({soft_text})",
        f"local      s = {s:.3f}x ({s_text})",
        f"predicted  1 / ((1 − f) + f / s) = {predicted:.3f}x end to end",
        f"measured   {measured_text}",
        (f"ceiling    1 / (1 − f) = {top:.3f}x" if math.isfinite(top) else "ceiling    unbounded (f = 1)")
        + ("" if share is None else f": this softmax captured {share:.1%} of what a free softmax could give"
           + ("" if measured is not None else " (predicted)")),
    ]
    if largest_after is not None:
        softmax_now = "" if softmax_after is None else f"; softmax is now {softmax_after:.1%}"
        lines.append(f"largest    now {largest_after} at {largest_after_share:.1%} of the pass{softmax_now} "
                     f"(before: {largest_before} at {largest_before_share:.1%}): optimize the largest fraction first")
    else:
        lines.append(f"largest    {largest_before} at {largest_before_share:.1%} of the pass: "
                     "optimize the largest fraction first")
    return lines


def _soft_text(rows: list[dict], kernel_names=()) -> str:
    soft = [r for r in rows if profiling.is_softmax(r["name"], kernel_names)]
    names = ", ".join(r["name"] for r in soft) or "no softmax row"
    return f"{names}: {profiling.softmax_us(rows, kernel_names):.0f} of {profiling.total_us(rows):.0f} µs per pass"


def _share(rows: list[dict], name: str) -> float:
    total = profiling.total_us(rows)
    return sum(r["device_time_us"] for r in rows if r["name"] == name) / total if total else 0.0


def _learner_or(compute: Callable[[], Any], fallback: Any) -> Any:
    """The learner's value for the summary; the grader's when their function fails (its own check says why)."""
    try:
        return compute()
    except (GradeFailure, NotImplementedError):
        return fallback


def recorded_summary(learner, row: dict, predicted: float, s: float, source: str) -> dict:
    """The worked reasoning with the learner's functions on the recorded seq-2048 profile (no GPU needed)."""
    rows = row["profile"]
    label = f"the seq {GPU_SEQ} profile"
    f = _learner_or(lambda: _fraction(learner, rows, label), profiling.softmax_share(rows))
    top = _learner_or(lambda: _number(_call(_function(learner, "amdahl_ceiling"), (f,), "amdahl_ceiling"),
                                      "amdahl_ceiling"), ceiling(f))
    before = _learner_or(lambda: check_largest(learner, rows, label, source), profiling.largest(rows)["name"])
    swapped = row.get("profile_swapped")
    after = None
    if swapped:
        after = _learner_or(lambda: check_largest(learner, swapped, f"{label} with the course's Triton softmax", source),
                            profiling.largest(swapped)["name"])
    measured = row.get("measured_speedup")
    if measured is not None:
        measured_text = (f"{measured:.3f}x on the recorded run (the course's softmax; "
                         f"{row.get('ms', 0):.3f} → {row.get('ms_swapped', 0):.3f} ms per pass): run on a GPU to "
                         "measure yours")
        s_text = (f"the course's softmax against torch.softmax on the recorded run, "
                  f"{row.get('softmax_ms_torch', 0):.3f} → {row.get('softmax_ms_swapped', 0):.3f} ms")
    else:
        measured_text = "not measured: a CPU placeholder profile has no GPU run; run on a GPU to measure yours"
        s_text = "s = 1.49, the worked example: the placeholder has no measured speedup"
    lines = summary_lines(
        f=f, soft_text=_soft_text(rows), s=s, s_text=s_text, predicted=predicted, measured=measured,
        measured_text=measured_text, top=top, largest_before=before, largest_before_share=_share(rows, before),
        largest_after=after, largest_after_share=_share(swapped, after) if swapped else None,
        softmax_after=profiling.softmax_share(swapped, row.get("softmax_kernels", ())) if swapped else None)
    return {
        "title": f"Amdahl's Law on the recorded profile (seq {GPU_SEQ})",
        "where": source,
        "lines": [f"profile    {source}"] + lines,
        "measured_here": False,
        "fraction": round(f, 5), "local_speedup": round(s, 4), "predicted": round(predicted, 5),
        "measured": measured, "ceiling": round(top, 5) if math.isfinite(top) else None,
        "captured": captured(measured if measured is not None else predicted, top),
        "largest_before": before, "largest_after": after,
    }


# --- 3. Measure: profile, swap in the exercise-3 softmax, time it end to end (GPU) -------------

def exercise3_file() -> tuple[Path, str]:
    """Your exercise-3 file once you have passed exercise 3 (`grade exercise 3`), else the course's."""
    from grader.commands import progress_file

    ex3 = catalogue.get(3)
    passed = progress_file.load().exercise(3).get("state") == "passed"
    if passed and ex3.learner_path.is_file():
        return ex3.learner_path, "yours: you passed exercise 3"
    if ex3.solution_path.is_file():
        why = "the course's reference: you have not passed exercise 3 yet" if not passed else \
            f"the course's reference: {ex3.learner_file} is missing"
        return ex3.solution_path, why
    raise GradeFailure(f"no exercise-3 softmax to swap in: neither {ex3.learner_file} (passed) nor "
                       f"{ex3.solution_file} exists")


def batch_for(seq: int, free: int, n_heads: int = model.N_HEADS, max_batch: int = GPU_MAX_BATCH) -> int:
    """Largest batch (up to ``max_batch``) whose score matrices fit in a third of ``free`` GPU memory.

    Per sequence in the batch: the scores, the probabilities, a second output from the swapped
    softmax and slack, four (H, S, S) fp32 matrices (at S = 2048, H = 8: 0.5 GB).
    """
    return max(1, min(max_batch, int(free // 3 // per_sequence_bytes(seq, n_heads))))


def per_sequence_bytes(seq: int, n_heads: int = model.N_HEADS) -> int:
    return 4 * n_heads * seq * seq * 4


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The block the check profiles on ``device``: batch 8 of 2048 tokens, fewer where the score
    matrices would not fit in a third of the free memory. Graded on the prediction, not on GB/s."""
    batch = batch_for(GPU_SEQ, free_bytes)
    return plan.PerformanceInput(
        label=f"batch {batch} × seq {GPU_SEQ}, d_model {model.D_MODEL}, {model.N_HEADS} heads, fp32", dtype="fp32",
        data_bytes=batch * per_sequence_bytes(GPU_SEQ), held_bytes=batch * per_sequence_bytes(GPU_SEQ),
        sizes={"batch": batch, "seq": GPU_SEQ}, cache_bound=False)


def check_measurement(learner, measured: dict, softmax_source: str, where: str, record=None) -> dict:
    """Grade the learner's functions against one measurement; returns the summary for the report."""
    rows, swapped = measured["profile"], measured["profile_swapped"]
    kernels = measured.get("softmax_kernels", [])
    shape = "×".join(str(n) for n in measured["softmax_shape"])
    checks.require(measured["softmax_error"] <= 1e-4,
                   f"the exercise-3 softmax from {softmax_source} is wrong on the block's {shape} score rows (max "
                   f"error {measured['softmax_error']:.2e} against torch.softmax): timing a wrong softmax "
                   "would measure nothing, so fix exercise 3 first")
    checks.require(measured["block_error"] <= 1e-3,
                   f"with the softmax from {softmax_source} the block's output moves by "
                   f"{measured['block_error']:.2e} (relative) from the output with torch.softmax: the swap must "
                   "not change the answer")
    checks.require(profiling.total_us(rows) > 0 and profiling.softmax_us(rows) > 0,
                   "the profiler recorded no GPU kernels for the block (or no softmax among them), so there is no "
                   "fraction to read: torch.profiler needs CUPTI, which ships with the CUDA build of PyTorch; "
                   "is another profiler (Nsight) attached?")
    label = f"this GPU's profile (seq {measured['seq_len']})"
    f = check_fraction(learner, rows, label, where)
    before = check_largest(learner, rows, label, where)
    after = check_largest(learner, swapped, f"this GPU's profile with {softmax_source.split(' ')[0]}", where)
    s = measured["local_speedup"]
    learner_function = _function(learner, "predict_speedup")
    predicted = check_prediction(learner_function, rows, s, label, where)
    top = _number(_call(_function(learner, "amdahl_ceiling"), (f,), f"amdahl_ceiling({f:.4f})"), "amdahl_ceiling")
    measured_speedup = measured["measured_speedup"]
    error = predicted / measured_speedup - 1
    passed = abs(error) <= PREDICTION_TOLERANCE
    measured_text = (f"{measured_speedup:.3f}x ({measured['ms']:.3f} → {measured['ms_swapped']:.3f} ms per pass); "
                     f"the prediction is off by {error:+.1%} (tolerance ±{PREDICTION_TOLERANCE:.0%})")
    s_text = (f"{softmax_source.split(' ')[0]} against torch.softmax on the {shape} scores, "
              f"{measured['softmax_ms_torch']:.3f} → {measured['softmax_ms_swapped']:.3f} ms")
    lines = summary_lines(
        f=f, soft_text=_soft_text(rows), s=s, s_text=s_text, predicted=predicted, measured=measured_speedup,
        measured_text=measured_text, top=top, largest_before=before, largest_before_share=_share(rows, before),
        largest_after=after, largest_after_share=_share(swapped, after),
        softmax_after=profiling.softmax_share(swapped, kernels))
    verdict = (f"prediction within ±{PREDICTION_TOLERANCE:.0%} of the measurement ({error:+.1%})" if passed else
               f"prediction off by {error:+.1%}, more than ±{PREDICTION_TOLERANCE:.0%}")
    summary = {
        "title": "Amdahl's Law: profile, predict, measure",
        "where": where,
        "lines": [f"block      {where}", f"softmax    {softmax_source}"] + lines,
        "measured_here": True,
        "passed": passed,
        "fraction": round(f, 5), "local_speedup": s, "predicted": round(predicted, 5),
        "measured": measured_speedup, "error": round(error, 4), "tolerance": PREDICTION_TOLERANCE,
        "ceiling": round(top, 5) if math.isfinite(top) else None,
        "captured": captured(measured_speedup, top),
        "largest_before": before, "largest_after": after,
        "softmax_fraction_after": round(profiling.softmax_share(swapped, kernels), 5),
        "busy_fraction": measured.get("busy_fraction"),
        "softmax_source": softmax_source,
    }
    # grader.commands.report renders "lines" and "verdict" in its performance panel; "amdahl" is the same in numbers.
    from grader.wire.results import PerformanceRecord

    performance = PerformanceRecord(passed=passed, verdict=verdict, unit="amdahl", input=where,
                                    gpu=where.split(",")[0], lines=list(summary["lines"]), details={"amdahl": summary})
    if record is not None:
        record.performance = performance
    if not passed:
        busy = measured.get("busy_fraction")
        idle = (f"the GPU idled {1 - busy:.0%} of the pass between kernels, time the profile does not see; "
                if busy is not None and busy < 0.97 else "")
        raise GradeFailure(
            f"performance: you predicted {predicted:.3f}x and the block measured {measured_speedup:.3f}x "
            f"({error:+.1%}, tolerance ±{PREDICTION_TOLERANCE:.0%}) with f = {f:.3f} and s = {s:.3f}. Your "
            f"functions follow the law, so the gap is in its inputs: {idle}a softmax timed alone may run at "
            "another speed between two GEMMs, or another process shares this GPU. Run it again; if the gap "
            "stays, explaining it is the finding (chapter 7: predict, measure, explain the difference)")
    return summary


def test_performance(learner, mode, check):
    """GPU: the block measured with torch's softmax and with the exercise-3 one swapped in.

    The exercise-3 file runs in a learner process of its own (the judge never imports learner
    code, the course's reference included): `measure_block` is run there, on that file's softmax,
    and its numbers come back as data. The verdict is on this file's predictions against them."""
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    from grader.judge.learner_process import LearnerProcess

    path, why = exercise3_file()
    softmax_source = f"{_relative(path)} ({why})"
    card, timed = plan.here(__file__)
    batch = timed.sizes["batch"]
    ex3 = catalogue.get(3)
    process = LearnerProcess(path, display=_relative(path), mode="gpu")
    try:
        process.start()
        process.ready()
        reply = process.request({"op": "measure", "target": "grader.exercises.ex06_amdahl.block_measurement:measure_block",
                                 "function": ex3.function, "kwargs": {"seq": GPU_SEQ, "batch": batch}}, timeout=600)
    except GradeFailure as failure:
        raise GradeFailure(f"profiling the block with the softmax from {softmax_source} failed: {failure}",
                           kind=Kind.WRONG) from None
    finally:
        process.close()
    measured = reply.get("result")
    if not isinstance(measured, dict):
        raise GradeFailure(f"profiling the block with the softmax from {softmax_source} returned no measurement")
    where = f"{card.name}, {timed.label}"
    check_measurement(learner, measured, softmax_source, where, record=check)
