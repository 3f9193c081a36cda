"""Rendering a run: the terminal verdict (rich) and the JSON contract.

JSON (fields may be added, never renamed)::

    {"exercise": N, "passed": bool, "mode": "gpu" | "interpreter",
     "checks": [{"name", "passed", "message", "skipped", "kind"}],
     "performance": {"achieved_gbps", "ceiling_gbps", "spec_gbps", "fraction", "floor", ...} | null,
     "seed": S, "launches_per_call": K | null, "versions": {...}, "learner_file": "...",
     "show_command": "grade show N --from ..." | null}

``show_command`` is set when a check failed with a kind the access map draws
(`grader.failures.ACCESS_KINDS`: a read or write outside a tensor, unwritten output elements):
the text report then ends with that command.
"""

from __future__ import annotations

from collections import Counter, OrderedDict

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from grader.catalogue import Exercise
from grader.failures import ACCESS_KINDS
from grader.isolation import CheckResult, RunResult

NOT_MEASURED = "performance: not measured (no GPU)"


def launches_per_call(run: RunResult) -> int | None:
    counts = Counter(n for check in run.checks for n in check.launches)
    return counts.most_common(1)[0][0] if counts else None


def show_command(run: RunResult, exercise: Exercise | None = None) -> str | None:
    """`grade show N [--from PATH]` when a failed check's mistake is one the access map draws, else None."""
    if not any(c.kind in ACCESS_KINDS and not c.passed and not c.skipped for c in run.checks):
        return None
    from grader import show

    own_file = exercise is not None and run.learner_file.endswith(exercise.learner_file)
    return show.command(run.exercise, None if own_file else run.learner_file)


def to_json(run: RunResult) -> dict:
    return {
        "exercise": run.exercise,
        "passed": run.passed,
        "mode": run.mode,
        "checks": [
            {"name": c.name, "passed": c.passed, "message": c.message, "skipped": c.skipped, "kind": c.kind}
            for c in run.checks
        ] + ([{"name": "start", "passed": False, "message": run.fatal, "skipped": False, "kind": "fatal"}]
             if run.fatal else []),
        "performance": run.performance,
        "seed": run.seed,
        "launches_per_call": launches_per_call(run),
        "versions": run.versions,
        "learner_file": run.learner_file,
        "amdahl": amdahl_summary(run),
        "byte_model": run.extra("byte_model"),
        "traffic": run.extra("traffic"),
        "show_command": show_command(run, _catalogued(run.exercise)),
    }


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


def render(run: RunResult, exercise: Exercise, console: Console | None = None) -> None:
    console = console or Console()
    title = f"Exercise {exercise.number} · {exercise.title}"
    console.print(Text(title, style="bold"))
    mode = "GPU" if run.mode == "gpu" else "Triton interpreter (no GPU)" if run.mode == "interpreter" else run.mode
    versions = ", ".join(f"{k} {v}" for k, v in run.versions.items() if v)
    console.print(Text(f"{run.learner_file} · {mode} · {versions} · seed {run.seed}", style="dim"))
    console.print()

    if run.fatal:
        console.print(Panel(escape(run.fatal), title="the checks could not run", border_style="red"))
        return

    not_impl = next((c for c in run.checks if c.kind == "not_implemented" or c.kind == "import"), None)
    if not_impl is not None:
        label = "not implemented yet" if not_impl.kind == "not_implemented" else "your file did not import"
        console.print(Text.assemble(("✗ ", "bold red"), (label, "bold red")))
        console.print(Text("  " + not_impl.message.removeprefix("not implemented yet: ")))
        remaining = sum(1 for c in run.checks if c.not_run)
        console.print(Text(f"  {remaining} other checks were not run.", style="dim"))
        _verdict(run, exercise, console)
        return

    groups: "OrderedDict[str, list[CheckResult]]" = OrderedDict()
    for check in run.checks:
        groups.setdefault(_group(check.name), []).append(check)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(width=2)
    table.add_column(style="bold")
    table.add_column()
    for group, members in groups.items():
        not_run = [c for c in members if c.kind == "not_run"]
        skipped = [c for c in members if c.skipped and c.kind != "not_run"]
        failed = [c for c in members if not c.passed and not c.skipped and c.kind != "not_run"]
        if failed:
            passed = len(members) - len(failed) - len(not_run) - len(skipped)
            summary = f"{passed} of {len(members)} cases passed" + (f", {len(not_run)} not run" if not_run else "")
            table.add_row(Text("✗", style="bold red"), group, Text(summary, style="red"))
            for check in failed[:4]:
                case = _case(check.name)
                prefix = f"[{case}] " if case else ""
                table.add_row("", "", Text(prefix + (check.message or check.kind), style="red"))
            if len(failed) > 4:
                table.add_row("", "", Text(f"… and {len(failed) - 4} more failing cases (see --json)", style="dim"))
        elif not_run and len(not_run) + len(skipped) == len(members):
            table.add_row(Text("·", style="dim"), group, Text(not_run[0].message, style="dim"))
        elif skipped and len(skipped) == len(members):
            table.add_row(Text("–", style="yellow"), group, Text(skipped[0].message, style="yellow"))
        else:
            extra = members[0].extra or {}
            detail = (f"{len(members)} cases" if len(members) > 1 else
                      (extra.get("traffic") or {}).get("sentence") or members[0].message or "passed")
            table.add_row(Text("✓", style="bold green"), group, Text(detail, style="green"))
    console.print(table)
    per_call = launches_per_call(run)
    if per_call is not None:
        console.print(Text(f"kernel launches per call: {per_call}", style="dim"))
    _recorded_amdahl(run, console)
    _performance(run, console)
    _verdict(run, exercise, console)


def amdahl_summary(run: RunResult) -> dict | None:
    """Exercise 6's reasoning: measured here (performance["amdahl"]) or on the recorded profile (a check's extra)."""
    if run.performance and run.performance.get("amdahl"):
        return run.performance["amdahl"]
    return run.extra("amdahl")


def _recorded_amdahl(run: RunResult, console: Console) -> None:
    """Without a GPU the performance panel is empty; exercise 6 still shows its reasoning on recorded data."""
    summary = amdahl_summary(run)
    if run.performance is not None or not summary or not summary.get("lines"):
        return
    console.print(Panel(escape("\n".join(summary["lines"])), title=summary.get("title", "Amdahl's Law"),
                        border_style="blue"))


def _performance(run: RunResult, console: Console) -> None:
    perf = run.performance
    if perf is None:
        if run.mode != "gpu":
            console.print(Text(NOT_MEASURED + ": correctness ran in Triton's interpreter; "
                               "run on an NVIDIA GPU for a performance verdict", style="yellow"))
        return
    lines: list[str] = []
    if perf.get("achieved_gbps") is not None:
        spec = f" · datasheet peak {perf['spec_gbps']:.0f} GB/s" if perf.get("spec_gbps") else ""
        lines += [
            f"{perf['achieved_gbps']:.0f} GB/s on {perf.get('input', 'the benchmark input')} "
            f"({perf['ms'] * 1000:.1f} µs, median of many runs, L2 flushed)",
            f"ceiling {perf['ceiling_gbps']:.0f} GB/s measured on this {perf.get('gpu', 'GPU')} "
            f"(copy {perf.get('copy_gbps', 0):.0f}, add {perf.get('add_gbps', 0):.0f}){spec}",
        ]
    lines += [str(line) for line in perf.get("lines", [])]  # exercise-specific lines (bytes, TFLOP/s, Amdahl)
    if perf.get("verdict"):
        lines.append(("passed: " if perf.get("passed") else "failed: ") + perf["verdict"])
    style = "green" if perf.get("passed") else "red"
    console.print(Panel(escape("\n".join(lines)), title="performance", border_style=style))


def _verdict(run: RunResult, exercise: Exercise, console: Console) -> None:
    console.print()
    if run.passed:
        extra = "" if run.performance else " — performance not measured (no GPU)"
        console.print(Text(f"PASSED: exercise {exercise.number}{extra}", style="bold green"))
    elif any(c.kind == "not_implemented" for c in run.checks):
        console.print(Text(f"FAILED: exercise {exercise.number} is not implemented yet: fill in the TODOs in "
                           f"{exercise.learner_file}", style="bold red"))
        return
    else:
        failed = sum(1 for c in run.checks if not c.passed and c.kind != "not_run" and not c.skipped)
        not_run = sum(1 for c in run.checks if c.kind == "not_run")
        extra = f", {not_run} not run" if not_run else ""
        console.print(Text(f"FAILED: exercise {exercise.number} ({failed} checks failed{extra})", style="bold red"))
        console.print(Text(f"Replay these exact inputs with: grade exercise {exercise.number} --seed {run.seed}"
                           + (f" --from {run.learner_file}" if not run.learner_file.endswith(exercise.learner_file) else ""),
                           style="dim"))
        command = show_command(run, exercise)
        if command:
            # soft_wrap: the command stays one line a learner can copy
            console.print(Text.assemble("See what your kernel read and wrote, program by program: ",
                                        (command, "bold")), soft_wrap=True)
