"""The traffic check's rules, held on every correctness call of the learner's function, not on one.

In the interpreter the learner's process counts the bytes of every call (`grader.learner.traffic.EveryCall`),
so the judge need not trust that the traffic check's own call looks like the others: a file that reads
``x`` twice, or loads without a mask, at every size but the traffic check's would pass a check made on
one call. Here the limits the traffic check states (``max_passes``) are remembered for the rest of the
run and held on every correctness call of the same function, made before it and after it
(`TrafficLog`), on every tensor at least as large as in the traffic check's own call; bytes outside
every tensor fail any call. Smaller tensors are left out of the pass counts: there a few bytes a
kernel reads per row are whole passes (exercise 10's Liger-style natural file reads a 1 x 1 `logits`
four times, where its limit is two), and no limit stated for the traffic check's shape means anything.

The learner's process reports raw counts; the arithmetic and the verdict are the judge's. What the
judge can check of counts that the process reports about itself is little: the sizes of the tensors
it handed over and the launches the watch recorded in the same call (`cross_check`). A process that
forges its counter wholesale is not caught here, and docs/grading.md's guarantees say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.learner import traffic
from grader.wire.failures import GradeFailure
from grader.wire.results import Kind

#: On a call at another size than the traffic check's, a tensor may be read this many passes more
#: than the check allows: a halo or one gathered element per row is a fraction of a pass that
#: depends on the size (exercise 10's limit is 2 + 2/V), a whole second read of the tensor is not.
OTHER_SIZE_SLACK = 0.5
#: The calls a log keeps (the latest): a whole grading of the largest spec makes a few hundred.
KEPT_CALLS = 2000


@dataclass
class Rules:
    """What the traffic checks of one function stated: the most passes of each input, the lesson,
    and the smallest size in bytes (of each input) the limits were counted at."""

    max_passes: dict[str, float] = field(default_factory=dict)
    lesson: str = ""
    least_bytes: dict[str, int] = field(default_factory=dict)


@dataclass
class TrafficLog:
    """The counts of every correctness call of the run, and the rules the traffic checks stated, by function."""

    calls: list[tuple[str, str, traffic.TrafficSummary]] = field(default_factory=list)  # (function, case, counts)
    rules: dict[str, Rules] = field(default_factory=dict)

    def add(self, function: str, case: str, counted: traffic.TrafficSummary) -> None:
        if counted.available:
            self.calls.append((function, case, counted))
            del self.calls[:-KEPT_CALLS]


def describe_case(shapes: dict[str, tuple[int, ...]]) -> str:
    """"inputs of shape `x` (4093,), `y` (4093,)": the call a sentence names."""
    return "inputs of shape " + ", ".join(f"`{name}` {shape}" for name, shape in shapes.items())


def cross_check(counted: traffic.TrafficSummary, sizes: dict[str, int], launches: int) -> GradeFailure | None:
    """What the judge knows against what the learner's process reported: the bytes of each tensor it
    handed over, and (at least) the launches the watch recorded in the same call."""
    for name, size in sizes.items():
        reported = counted.size_or_none(name)
        if reported != size:
            said = f"{reported:,} bytes" if reported is not None else "no size"
            return GradeFailure(
                f"the traffic your process reported gives `{name}` {said} where the grader handed over {size:,} bytes: "
                "the byte counter in your process was changed")
    # Fewer, not different: an autotuner's benchmark runs in the interpreter too, where the watch
    # records the launch once and the counter sees every run.
    if launches and len(counted.launches) < launches:
        return GradeFailure(
            f"the traffic your process reported counts {len(counted.launches)} kernel launches where the watch "
            f"recorded {launches}: the byte counter in your process was changed")
    return None


def outside_sentence(counted: traffic.TrafficSummary, case: str = "") -> str | None:
    """What went to addresses in no tensor, loads apart from stores, or None: "your kernel read 4.0 KiB
    outside every tensor (a load without a mask reads past the end of its tensor)"."""
    read, wrote = counted.loaded_bytes(traffic.OUTSIDE), counted.stored_bytes(traffic.OUTSIDE)
    if not read and not wrote:
        return None
    where = f" on {case}" if case else ""
    near = counted.outside_near
    if near:  # the counter says which tensor's edge each stray byte lies beside
        verbs = {"loaded": "read", "stored": "wrote"}
        parts = [f"{verbs[direction]} {traffic.format_bytes(nbytes)} "
                 + (f"past the end of `{name}`" if side == "past" else f"before the start of `{name}`")
                 for (name, side, direction), nbytes in sorted(near.items(), key=lambda kv: (kv[0][2], kv[0][0]))]
        accesses = " and ".join(dict.fromkeys(("a load" if d == "loaded" else "a store") for (_, _, d) in near))
        return (f"your kernel touched {traffic.format_bytes(read + wrote)} outside every tensor{where}: "
                f"{', '.join(parts)} ({accesses} without a mask, or with a mask that lets those lanes through)")
    if read and wrote:
        return (f"your kernel read {traffic.format_bytes(read)} and wrote {traffic.format_bytes(wrote)} outside every "
                f"tensor{where} (a load and a store without a mask reach past the end of their tensors)")
    if read:
        return (f"your kernel read {traffic.format_bytes(read)} outside every tensor{where} (a load without a mask "
                "reads past the end of its tensor)")
    return (f"your kernel wrote {traffic.format_bytes(wrote)} outside every tensor{where} (a store without a mask "
            "writes past the end of its tensor)")


def outside_failure(counted: traffic.TrafficSummary, case: str = "") -> GradeFailure | None:
    """Bytes at addresses in no tensor: a load or store without a mask, at any size."""
    said = outside_sentence(counted, case)
    if said is None:
        return None
    return GradeFailure(f"{said}: {traffic.describe(counted, 0)}", kind=Kind.MASKING)


def passes_failure(counted: traffic.TrafficSummary, rules: Rules, case: str) -> GradeFailure | None:
    """The first input read more often than the rules allow (with `OTHER_SIZE_SLACK`), on a tensor at
    least as large as the traffic check's."""
    for name, limit in rules.max_passes.items():
        if name not in counted.names() or counted.size_bytes(name) < rules.least_bytes.get(name, 0):
            continue
        passes = counted.passes(name)
        if passes > limit + OTHER_SIZE_SLACK + 1e-9:
            extra = counted.loaded_bytes(name) - int(limit * counted.size_bytes(name))
            reads = "one read" if limit == 1 else f"{limit:g} reads"
            return GradeFailure(
                f"your kernel read `{name}` {passes:.2f} times on {case} ({traffic.format_bytes(extra)} more than "
                f"{reads}){': ' + rules.lesson if rules.lesson else ''}. "
                f"Counted: {traffic.describe(counted, 0, rules.max_passes)}")
    return None


def hold(log: TrafficLog, function: str, case: str, counted: traffic.TrafficSummary) -> None:
    """A correctness call's counts: logged, and held to the rules stated so far (GradeFailure)."""
    log.add(function, case, counted)
    if not counted.available:
        return
    failure = outside_failure(counted, case)
    if failure is None and function in log.rules:
        failure = passes_failure(counted, log.rules[function], case)
    if failure is not None:
        raise failure


def state(log: TrafficLog, function: str, max_passes: dict[str, float], lesson: str,
          counted: traffic.TrafficSummary) -> None:
    """The traffic check's limits (on tensors at least as large as in its own call, ``counted``), from
    now on held on every call of ``function``, and on the calls made before it: GradeFailure naming
    the first that breaks them."""
    held = log.rules.get(function, Rules())
    merged, least = dict(held.max_passes), dict(held.least_bytes)
    for name, limit in max_passes.items():  # two checks of one function: the stricter limit of each input
        merged[name] = min(limit, merged.get(name, limit))
        if name in counted.names():
            least[name] = min(counted.size_bytes(name), least.get(name, counted.size_bytes(name)))
    log.rules[function] = Rules(merged, lesson or held.lesson, least)
    for called, case, earlier in log.calls:
        if called == function:
            failure = passes_failure(earlier, log.rules[function], case)
            if failure is not None:
                raise failure
