"""The learner's screens that are not a grading verdict: `grade list` and the `grade watch` frame.

Kept apart from `grader.commands.report` (the verdict of one run) and free of torch imports, so
`grade list` answers at once.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader import catalogue
from grader.commands import progress_file


def available(exercise: catalogue.Exercise) -> bool:
    """Whether the exercise can be graded yet (its checks and its stub exist)."""
    return exercise.spec_file.is_file() and exercise.learner_path.is_file()


def next_exercise(state: progress_file.State) -> catalogue.Exercise | None:
    """The first exercise that can be graded and is not passed yet (None: all done)."""
    for exercise in catalogue.EXERCISES:
        if available(exercise) and not state.passed(exercise.number):
            return exercise
    return None


def _best(entry: dict) -> str:
    best = entry.get("best_fraction")
    if not isinstance(best, (int, float)):
        return "–"
    gbps = entry.get("best_gbps")
    return f"{best:.0%}" + (f" · {gbps:.0f} GB/s" if isinstance(gbps, (int, float)) else "")


def _floor(exercise: catalogue.Exercise) -> str:
    """The pass mark on a GPU: a fraction of the measured ceiling (or, for attention, of SDPA)."""
    if exercise.floor is None:
        return "–"
    return f"{exercise.floor:.0%}"


def progress_table(state: progress_file.State) -> Table:
    table = Table(title="Exercises", title_justify="left", caption="floor: what a pass needs on a GPU, a fraction of "
                  "your GPU's measured bandwidth ceiling unless the exercise's page names another yardstick; best: "
                  "the highest fraction one of your graded runs reached (GPU only)", caption_justify="left")
    table.add_column("#", justify="right")
    table.add_column("exercise", ratio=1)
    table.add_column("state", no_wrap=True)
    table.add_column("floor", justify="right", no_wrap=True)
    table.add_column("best", justify="right", no_wrap=True)
    table.add_column("when", no_wrap=True)
    for exercise in catalogue.EXERCISES:
        entry = state.exercise(exercise.number)
        label, style = progress_file.describe_state(entry)
        if not entry.get("state") and not available(exercise):
            label, style = "not available yet", "dim italic"
        when = entry.get("passed_at") if entry.get("state") == "passed" else entry.get("last_run")
        table.add_row(str(exercise.number), exercise.title, Text(label, style=style), _floor(exercise), _best(entry),
                      when or "–")
    return table


def bar(done: int, total: int, width: int = 28) -> Text:
    """A bar that reads the same in a terminal, a log file and a screen reader's text."""
    filled = round(width * done / total) if total else 0
    return Text.assemble(("█" * filled, "green"), ("░" * (width - filled), "dim"))


def overall(state: progress_file.State) -> Text:
    """One line: the bar, and exercises passed out of the whole course."""
    total = len(catalogue.EXERCISES)
    done = sum(1 for e in catalogue.EXERCISES if state.passed(e.number))
    return Text.assemble(bar(done, total), " ", (f"{done} of {total} exercises passed", "bold"))


def render_list(console: Console, state: progress_file.State) -> None:
    console.print(progress_table(state))
    console.print(overall(state))
    upcoming = next_exercise(state)
    if upcoming is None:
        if all(state.passed(e.number) for e in catalogue.EXERCISES):
            console.print(Text("Every exercise passed. `grade bench N` on a GPU plots your kernels "
                               "against PyTorch.", style="green"))
        else:
            console.print("Every exercise available so far is passed; the others are still being written.")
        return
    console.print(Text.assemble(
        "Next: exercise ", (str(upcoming.number), "bold"), f" ({upcoming.title}). Edit ",
        (upcoming.learner_file, "bold"), ", then `grade exercise ", str(upcoming.number),
        "`, or `grade watch` to re-grade on every save; `grade hint ", str(upcoming.number), "` when stuck."))


def watch_header(exercise: catalogue.Exercise, status: str) -> Text:
    """One line above the verdict (which names the exercise and the file itself)."""
    return Text.assemble(("grade watch", "bold"), f" · exercise {exercise.number} · {status}", style="dim")


def watch_footer(exercise: catalogue.Exercise, following: bool) -> Text:
    follow = " · a pass moves on to the next exercise" if following else ""
    return Text(f"Save {exercise.learner_file} to re-grade · `grade hint {exercise.number}` in another terminal"
                f"{follow} · Ctrl-C to stop", style="dim")
