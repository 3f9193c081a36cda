"""Rendering a run: the terminal verdict (rich) and the JSON contract.

JSON (`grader.wire.results.RunResult.to_json`; fields may be added, never renamed)::

    {"exercise": N, "passed": bool, "mode": "gpu" | "interpreter",
     "checks": [{"name", "passed", "message", "skipped", "kind"}],
     "performance": {"achieved_gbps", "ceiling_gbps", "spec_gbps", "fraction", "floor", ...} | null,
     "seed": S, "launches_per_call": K | null, "versions": {...}, "learner_file": "...",
     "notices": [...], "sandbox": "...", "traffic": {...} | null, "byte_model": {...} | null, ...,
     "show_command": "grade show N --from ..." | null}

``show_command`` is set when a check failed with a kind the access map draws
(`grader.wire.failures.ACCESS_KINDS`: a read or write outside a tensor, unwritten output elements):
the text report then ends with that command.

The terminal report is built to be read at 80 columns: one line per group of checks, each
distinct diagnosis shown once with the cases it came from (the same sentence in twelve cases is
one sentence and "the same in 11 more cases"), and every learner-facing string printed as text,
never as rich markup (a ``[grid]`` in a message stays a ``[grid]``).
"""

from __future__ import annotations

import re
from collections import OrderedDict

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from grader.catalogue import Exercise
from grader.wire.failures import ACCESS_KINDS, plural
from grader.learner import sandbox
from grader.learner.interpreter_fixes import BF16_ON_GPU_ONLY
from grader.wire.results import STOPPING, CheckRecord, Kind, RunResult

NOT_MEASURED = "performance: not measured (no GPU)"
#: Distinct diagnoses shown in full; the rest are counted.
SHOWN_DIAGNOSES = 3


def show_command(run: RunResult, exercise: Exercise | None = None) -> str | None:
    """`grade show N [--from PATH]` when a failed check's mistake is one the access map draws, else None."""
    if not any(c.kind in ACCESS_KINDS and not c.passed and not c.skipped for c in run.checks):
        return None
    from grader.commands import show

    drawn = exercise if exercise is not None and exercise.number == run.exercise else _catalogued(run.exercise)
    if drawn is None or not show.draws(drawn):  # an exercise with no access map: no command that would refuse
        return None

    own_file = exercise is not None and run.learner_file.endswith(exercise.learner_file)
    return show.command(run.exercise, None if own_file else run.learner_file)


def to_json(run: RunResult) -> dict:
    return {**run.to_json(), "show_command": show_command(run, _catalogued(run.exercise))}


def launches_per_call(run: RunResult) -> int | None:
    return run.launches_per_call()


def _catalogued(number: int) -> Exercise | None:
    from grader import catalogue

    try:
        return catalogue.get(number)
    except KeyError:
        return None


def _group(name: str) -> str:
    return name.split("[", 1)[0]


def _case(name: str) -> str:
    return name[len(_group(name)):].strip("[]")


def diagnosis_key(message: str) -> str:
    """What makes two failure messages "the same diagnosis": their leading clause, numbers aside."""
    head = re.split(r": |\. ", message, maxsplit=1)[0]
    return re.sub(r"-?\d[\d.,e+-]*", "#", head)


def _passed_detail(check: CheckRecord, verbose: bool) -> str:
    """What a passed check's row says: the traffic check's count in one short clause ("36.1 KiB
    moved, 1.00× the minimum of 36.1 KiB"), every tensor's figures only when ``verbose``."""
    sentence = ((check.extra or {}).get("traffic") or {}).get("sentence")
    if sentence:
        return sentence if verbose else sentence.rpartition(": ")[2]
    return check.message or "passed"


def render(run: RunResult, exercise: Exercise, console: Console | None = None, *, verbose: bool = False) -> None:
    """The verdict at 80 columns. ``verbose`` (``--verbose``, ``--traffic``) adds the per-tensor figures
    of checks that passed; a failure always has them."""
    console = console or Console()
    console.print(Text(f"Exercise {exercise.number} · {exercise.title}", style="bold"))
    # A file refused before its process started has no mode: the line then says only the seed.
    mode = {"gpu": "GPU", "interpreter": "Triton interpreter (no GPU)"}.get(run.mode)
    versions = ", ".join(f"{k} {v}" for k, v in run.versions.items() if v)
    console.print(Text(f"{run.learner_file}", style="dim"), soft_wrap=True)
    # Two short lines, not one that wraps at 80 columns mid-version.
    console.print(Text(f"{mode} · seed {run.seed}" if mode else f"seed {run.seed}", style="dim"))
    if versions:
        console.print(Text(versions, style="dim"))
    if run.sandbox and not sandbox.is_full(run.sandbox):  # a weaker level than the full one is said, not hidden
        console.print(Text(f"your code ran {run.sandbox}", style="dim"), soft_wrap=True)
    for notice in run.notices:
        console.print(Text("! " + notice, style="yellow"))
    console.print()

    if run.fatal:
        console.print(Panel(Text(run.fatal), title="the checks could not run", border_style="red"))
        _verdict(run, exercise, console)
        return

    stopper = next((c for c in run.checks if c.kind in STOPPING), None)
    if stopper is not None:
        label = {Kind.NOT_IMPLEMENTED: "not implemented yet", Kind.IMPORT: "your file did not import",
                 Kind.MISSING_FUNCTION: "the function is missing",
                 Kind.REJECTED: "refused by the class grader's honesty check",
                 Kind.SETUP: "the grader could not start your code (a problem of this machine's setup, not of your file)",
                 }[stopper.kind]
        console.print(Text.assemble(("✗ ", "bold red"), (label, "bold red")))
        console.print(Text("  " + stopper.message.removeprefix("not implemented yet: ")))
        remaining = sum(1 for c in run.checks if c.not_run)
        if remaining:
            console.print(Text(f"  {plural(remaining, 'other check')} {'was' if remaining == 1 else 'were'} not run.",
                               style="dim"))
        _verdict(run, exercise, console)
        return

    groups: "OrderedDict[str, list[CheckRecord]]" = OrderedDict()
    for check in run.checks:
        groups.setdefault(_group(check.name), []).append(check)
    diagnoses: "OrderedDict[str, list[CheckRecord]]" = OrderedDict()
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(width=1)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    bf16_line_shown = False
    reasons: "OrderedDict[str, None]" = OrderedDict()  # why whole groups were not run, each said once
    for group, members in groups.items():
        not_run = [c for c in members if c.not_run]
        skipped = [c for c in members if c.skipped and not c.not_run]
        failed = [c for c in members if c.failed]
        if failed:
            passed = len(members) - len(failed) - len(not_run) - len(skipped)
            summary = f"{passed} of {plural(len(members), 'case')} passed" + (f", {len(not_run)} not run" if not_run else "")
            table.add_row(Text("✗", style="bold red"), Text(group), Text(summary, style="red"))
            for check in failed:
                diagnoses.setdefault(diagnosis_key(check.message or str(check.kind)), []).append(check)
        elif not_run and len(not_run) + len(skipped) == len(members):
            table.add_row(Text("·", style="dim"), Text(group), Text("not run", style="dim"))
            reason = not_run[0].message.removeprefix("not run").lstrip(": ")
            reasons.setdefault(reason or "an earlier failure stopped the run", None)
        elif skipped and len(skipped) == len(members):
            table.add_row(Text("–", style="yellow"), Text(group), Text(skipped[0].message, style="yellow"))
            bf16_line_shown |= skipped[0].message == BF16_ON_GPU_ONLY
        else:
            detail = plural(len(members), "case") if len(members) > 1 else _passed_detail(members[0], verbose)
            table.add_row(Text("✓", style="bold green"), Text(group), Text(detail, style="green"))
    console.print(table)
    for reason in reasons:
        console.print(Text(f"Not run: {reason.rstrip('.')}.", style="dim"))
    for i, (key, checks) in enumerate(diagnoses.items()):
        if i == SHOWN_DIAGNOSES:
            rest = sum(len(c) for c in list(diagnoses.values())[i:])
            console.print(Text(f"… and {plural(len(diagnoses) - i, 'other diagnosis', 'other diagnoses')} in "
                               f"{plural(rest, 'case')} (see --json)", style="dim"))
            break
        first = checks[0]
        console.print()
        console.print(Text(f"{first.name}: ", style="bold red") + Text(first.message or str(first.kind), style="red"))
        if len(checks) > 1:
            names = ", ".join(c.name for c in checks[1:4]) + (", …" if len(checks) > 4 else "")
            console.print(Text(f"  the same in {plural(len(checks) - 1, 'more case')} ({names}; see --json)",
                               style="dim"))
    if not bf16_line_shown and any(c.skipped and c.message == BF16_ON_GPU_ONLY for c in run.checks):
        console.print(Text(BF16_ON_GPU_ONLY, style="yellow"))  # once, for every bf16 case left to a GPU
    per_call = launches_per_call(run)
    if per_call is not None:
        console.print(Text(f"kernel launches per call: {per_call}", style="dim"))
    _panel(run, console)
    if not reasons:  # a run stopped early did not get as far as performance: nothing more to say of it
        _performance(run, console)
    _verdict(run, exercise, console)


def _panel(run: RunResult, console: Console) -> None:
    """A check's own panel (its ``extra["panel"]``: title and lines), shown when no performance was measured."""
    panel = run.extra("panel")
    if run.performance is not None or not panel or not panel.get("lines"):
        return
    console.print(Panel(Text("\n".join(str(line) for line in panel["lines"])), title=panel.get("title"),
                        border_style="blue"))


def _performance(run: RunResult, console: Console) -> None:
    perf = run.performance
    if perf is None:
        if run.mode != "gpu":
            console.print(Text(NOT_MEASURED + ": correctness ran in Triton's interpreter; "
                               "run on an NVIDIA GPU for a performance verdict", style="yellow"))
        return
    lines: list[str] = []
    if perf.achieved_gbps is not None and perf.ms is not None:
        spec = f" · datasheet {perf.spec_gbps:.0f} GB/s" if perf.spec_gbps else ""
        lines += [
            f"{perf.achieved_gbps:.0f} GB/s on {perf.input or 'the benchmark input'} "
            f"({perf.ms * 1000:.1f} µs per call, the grader's clock, fresh inputs)",
            f"ceiling {perf.ceiling_gbps:.0f} GB/s measured on this {perf.gpu or 'GPU'} "
            f"(copy {perf.copy_gbps or 0:.0f}, add {perf.add_gbps or 0:.0f}){spec}",
        ]
    lines += [str(line) for line in perf.lines]
    if perf.verdict:
        lines.append(("passed: " if perf.passed else "failed: ") + perf.verdict)
    console.print(Panel(Text("\n".join(lines)), title="performance", border_style="green" if perf.passed else "red"))


def _verdict(run: RunResult, exercise: Exercise, console: Console) -> None:
    console.print()
    if run.passed:
        extra = "" if run.performance else " — performance not measured (no GPU)"
        console.print(Text(f"PASSED: exercise {exercise.number}{extra}", style="bold green"))
        return
    if any(c.kind == Kind.NOT_IMPLEMENTED for c in run.checks):
        console.print(Text(f"FAILED: exercise {exercise.number} is not implemented yet: fill in the TODOs in "
                           f"{exercise.learner_file}", style="bold red"))
        return
    if run.fatal:
        console.print(Text(f"FAILED: exercise {exercise.number} could not be graded", style="bold red"))
        return
    failed = sum(1 for c in run.checks if c.failed)
    not_run = sum(1 for c in run.checks if c.not_run)
    extra = f", {not_run} not run" if not_run else ""
    console.print(Text(f"FAILED: exercise {exercise.number} ({plural(failed, 'check')} failed{extra})", style="bold red"))
    if any(c.kind in STOPPING for c in run.checks):
        return  # no input was made: nothing to replay
    replay = f"grade exercise {exercise.number} --seed {run.seed}"
    if not run.learner_file.endswith(exercise.learner_file):
        replay += f" --from {run.learner_file}"
    console.print(Text("Replay these exact inputs with: ", style="dim") + Text(replay, style="dim"), soft_wrap=True)
    command = show_command(run, exercise)
    if command:  # soft_wrap: the command stays one line a learner can copy
        console.print(Text.assemble("See what your kernel read and wrote, program by program: ", (command, "bold")),
                      soft_wrap=True)
