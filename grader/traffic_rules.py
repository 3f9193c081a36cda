"""The traffic check's rules, held on every call of the learner's function, not on one.

The learner's process counts the bytes of every call (`grader.traffic.EveryCall`), so the judge
need not trust that the traffic check's own call looks like the others: a file that reads ``x``
twice, or loads without a mask, at every size but the traffic check's would pass a check made on
one call. Here the rules the traffic check states (``max_passes``) are remembered for the rest of
the run and held on every correctness call of the same function, before and after it
(`TrafficLog`), on every tensor at least as large as the traffic check's, and bytes outside every
tensor fail any call. Smaller tensors are left out of the pass counts: there a few bytes a kernel
reads per row are whole passes (exercise 10's Liger-style natural file reads a 1 x 1 `logits` four
times, where its limit is two), and no limit stated for the traffic check's shape would mean
anything.

What the judge can check of figures that the learner's process reports about itself is little:
the sizes of the tensors it handed over (`cross_check`) and, through the traffic check, that
every element of an input the answer depends on was read and every element of the output
written. A process that forges its counter wholesale is not caught here; docs/grading.md's
guarantees say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader import traffic
from grader.failures import GradeFailure
from grader.results import Kind

#: On a call at another size than the traffic check's, a tensor may be read this many passes more
#: than the check allows: a halo or one gathered element per row is a fraction of a pass that
#: depends on the size (exercise 10's limit is 2 + 2/V), a whole second read of the tensor is not.
OTHER_SIZE_SLACK = 0.5


@dataclass
class TrafficLog:
    """The figures of every call of the run (by function) and the rules the traffic check stated."""

    calls: list[tuple[str, str, traffic.TrafficSummary]] = field(default_factory=list)  # (function, case, figures)
    #: function -> (max_passes, lesson, the bytes of each tensor in the traffic check's call)
    rules: dict[str, tuple[dict[str, float], str, dict[str, int]]] = field(default_factory=dict)

    def add(self, function: str, case: str, counted: traffic.TrafficSummary) -> None:
        if counted.available:
            self.calls.append((function, case, counted))
            del self.calls[:-2000]


def outside_failure(counted: traffic.TrafficSummary, sentence: str) -> GradeFailure | None:
    outside = counted.loaded_bytes(traffic.OUTSIDE) + counted.stored_bytes(traffic.OUTSIDE)
    if not outside:
        return None
    return GradeFailure(
        f"your kernel touched {traffic.format_bytes(outside)} outside every tensor (a load or store "
        f"without a mask reaches past the end): {sentence}", kind=Kind.MASKING)


def passes_failure(counted: traffic.TrafficSummary, max_passes: dict[str, float], lesson: str, *,
                   slack: float = 0.0, case: str = "", at_least: dict[str, int] | None = None) -> GradeFailure | None:
    for name, limit in max_passes.items():
        if name not in counted.names() or counted.size_bytes(name) < (at_least or {}).get(name, 0):
            continue
        passes = counted.passes(name)
        if passes > limit + slack + 1e-9:
            extra = counted.loaded_bytes(name) - int(limit * counted.size_bytes(name))
            where = f" on {case}" if case else ""
            return GradeFailure(
                f"your kernel read `{name}` {passes:.2f} times{where} ({traffic.format_bytes(extra)} more than "
                f"{'one read' if limit == 1 else f'{limit:g} reads'}){': ' + lesson if lesson else ''}. "
                f"{traffic.describe(counted, 0, max_passes)}")
    return None


def cross_check(counted: traffic.TrafficSummary, sizes: dict[str, int], launches: int) -> GradeFailure | None:
    """What the judge knows against what the learner's process reported: the bytes of each tensor it
    handed over, and (at least) the launches the watch recorded in the same call."""
    for name, size in sizes.items():
        if name in counted.names() and counted.size_bytes(name) != size:
            return GradeFailure(
                f"the traffic your process reported gives `{name}` {counted.size_bytes(name):,} bytes where the grader "
                f"handed over {size:,}: the byte counter in your process was changed")
    # Fewer, not different: an autotuner's benchmark runs in the interpreter too, where the watch
    # records the launch once and the counter sees every run.
    if launches and len(counted.launches) < launches:
        return GradeFailure(
            f"the traffic your process reported counts {len(counted.launches)} kernel launches where the watch "
            f"recorded {launches}: the byte counter in your process was changed")
    return None


def hold(log: TrafficLog, function: str, case: str, counted: traffic.TrafficSummary) -> None:
    """A correctness call's figures: logged, and held to the rules stated so far (GradeFailure)."""
    log.add(function, case, counted)
    if not counted.available:
        return
    failure = outside_failure(counted, traffic.describe(counted, 0))
    if failure is None and function in log.rules:
        max_passes, lesson, sizes = log.rules[function]
        failure = passes_failure(counted, max_passes, lesson, slack=OTHER_SIZE_SLACK, case=case, at_least=sizes)
    if failure is not None:
        raise failure


def state(log: TrafficLog, function: str, max_passes: dict[str, float], lesson: str,
          counted: traffic.TrafficSummary) -> None:
    """The traffic check's rules (its limits, on tensors at least as large as in its own call,
    ``counted``), from now on held on every call of ``function``, and on the calls made before it
    (GradeFailure naming the first that breaks them)."""
    held, held_lesson, held_sizes = log.rules.get(function, ({}, "", {}))
    merged, sizes = dict(held), dict(held_sizes)
    for name, limit in max_passes.items():  # two checks of one function: the stricter limit of each tensor
        merged[name] = min(limit, merged.get(name, limit))
        if name in counted.names():
            sizes[name] = min(counted.size_bytes(name), sizes.get(name, counted.size_bytes(name)))
    log.rules[function] = (merged, lesson or held_lesson, sizes)
    for called, case, earlier in log.calls:
        if called != function:
            continue
        failure = outside_failure(earlier, traffic.describe(earlier, 0)) or passes_failure(
            earlier, max_passes, lesson, slack=OTHER_SIZE_SLACK, case=case, at_least=sizes)
        if failure is not None:
            raise failure
