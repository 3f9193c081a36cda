"""`grade watch [N]`: re-grade an exercise every time its file is saved.

(Not `grader.learner.call_watch`, which records the kernel launches and torch ops of one graded call.)

The loop is written so it can be tested without a terminal or a file system watcher:
`watch_loop` takes any iterable of change batches (what `watchfiles.watch` yields: sets of
``(change, path)``) and a `Session` whose grading function and console are injected.

* One batch is one save: editors write a file in several steps (truncate, write, rename) and
  watchfiles gathers the events of one save into one batch (``step`` ms of quiet closes it), so
  a batch that touches the watched file causes exactly one re-grade, however many events it holds.
* A save that does not change the file's bytes does not re-grade (some editors save on focus loss).
* Without N, the session follows the course: after a pass it moves on to the next exercise that
  is not passed yet, and says so.
* Ctrl-C, while waiting or in the middle of a grading run, ends the loop with exit status 0.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from rich.console import Console
from rich.text import Text

from grader import catalogue
from grader.commands import progress_file
from grader.commands.progress_view import next_exercise, watch_footer, watch_header

#: watchfiles: yield a batch after this many ms without a new event (one save), at most `DEBOUNCE_MS`.
STEP_MS = 100
DEBOUNCE_MS = 1600


def _same_file(a: str | Path, b: Path) -> bool:
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _digest(path: Path) -> bytes | None:
    try:
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError:  # mid-save (some editors delete, then rename) or deleted by the learner
        return None


class Session:
    """What is being watched, how to grade it, and where to show the verdict."""

    def __init__(self, exercise: catalogue.Exercise, *, grade: Callable[[catalogue.Exercise, Path], Any],
                 console: Console, follow: bool = False, record: bool = True,
                 path_for: Callable[[catalogue.Exercise], Path] = lambda e: e.learner_path,
                 advance: Callable[[], catalogue.Exercise | None] | None = None,
                 render: Callable[[Any, catalogue.Exercise, Console], None] | None = None,
                 clear: bool = True):
        self.exercise = exercise
        self.grade = grade
        self.console = console
        self.follow = follow
        self.record = record
        self.path_for = path_for
        self.advance = advance or (lambda: next_exercise(progress_file.load()))
        self.render = render
        self.clear = clear
        self.last_digest: bytes | None = None
        self.runs = 0

    @property
    def path(self) -> Path:
        return self.path_for(self.exercise)

    def touches(self, batch: Iterable[tuple[Any, str]]) -> bool:
        return any(_same_file(changed, self.path) for _, changed in batch)

    def _frame(self, status: str) -> None:
        if self.clear:
            self.console.clear()
        self.console.print(watch_header(self.exercise, status))
        self.console.print()

    def grade_if_changed(self) -> bool:
        """Grade the watched file if its bytes changed since the last run; True if it graded."""
        digest = _digest(self.path)
        if digest is None:
            self._frame(f"{self.path} is missing; waiting for it to be saved again")
            self.console.print(watch_footer(self.exercise, self.follow))
            return False
        if digest == self.last_digest:
            return False
        self.last_digest = digest
        self._frame(f"grading {self.path.name} … (saved {time.strftime('%H:%M:%S')})")
        started = time.monotonic()
        run = self.grade(self.exercise, self.path)
        self.runs += 1
        if self.record:
            progress_file.record_run(self.exercise.number, run)
        self._frame(f"graded at {time.strftime('%H:%M:%S')} in {time.monotonic() - started:.1f} s")
        self._show(run)
        if run.passed and self.follow:
            self._move_on()
        self.console.print(watch_footer(self.exercise, self.follow))
        return True

    def _show(self, run: Any) -> None:
        if self.render is not None:
            self.render(run, self.exercise, self.console)
            return
        from grader.commands import report

        report.render(run, self.exercise, self.console)

    def _move_on(self) -> None:
        upcoming = self.advance()
        self.console.print()
        if upcoming is None or upcoming.number == self.exercise.number:
            self.console.print(Text("That was the last exercise available: well done. Still watching this "
                                    "one; Ctrl-C to stop.", style="bold green"))
            return
        self.exercise = upcoming
        # Grade the next file only once it is saved: its stub would only say "not implemented yet".
        self.last_digest = _digest(self.path)
        self.console.print(Text.assemble(
            ("Next: exercise ", "bold green"), (str(upcoming.number), "bold green"), f" ({upcoming.title}). "
            "Now watching ", (upcoming.learner_file, "bold"), f"; `grade hint {upcoming.number}` when stuck."))


def watch_loop(batches: Iterable[Iterable[tuple[Any, str]]], session: Session) -> int:
    """Grade once now, then once per batch of changes that touches the watched file.

    Returns the exit status: 0, also when the learner presses Ctrl-C (while waiting or while a
    grading run is in progress).
    """
    try:
        session.grade_if_changed()
        for batch in batches:
            if session.touches(batch):
                session.grade_if_changed()
    except KeyboardInterrupt:
        pass
    session.console.print()
    session.console.print(Text(f"Stopped watching after {session.runs} grading run"
                               f"{'' if session.runs == 1 else 's'}. `grade list` shows your progress.",
                               style="dim"))
    return 0


def file_changes(folder: Path, *, stop_event: Any = None) -> Iterable[set[tuple[Any, str]]]:
    """Batches of changes to Python files directly in ``folder`` (watchfiles, one batch per save).

    ``stop_event`` (a `threading.Event`) ends the iteration when set; tests use it.
    """
    import watchfiles

    default = watchfiles.DefaultFilter()  # skips editor swap and backup files

    def python_file(change: Any, path: str) -> bool:
        return path.endswith(".py") and default(change, path)

    return watchfiles.watch(folder, watch_filter=python_file, step=STEP_MS, debounce=DEBOUNCE_MS,
                            recursive=False, raise_interrupt=True, stop_event=stop_event)


def _state_folder() -> tuple[str, ...]:
    from grader.commands import progress_file

    folder = progress_file.state_dir()
    return (str(folder),) if folder.is_dir() else ()


def isolated_grader(*, interpreter: bool, timeout: float | None) -> Callable[[catalogue.Exercise, Path], Any]:
    """The real grading function: `grader.commands.isolation.run_checks` with a fresh seed each save."""

    def grade(exercise: catalogue.Exercise, path: Path):
        from grader.commands import isolation

        seed = int.from_bytes(os.urandom(3), "big")
        return isolation.run_checks(exercise, path, seed=seed, interpreter=interpreter, check_timeout=timeout,
                                    hide=_state_folder(), kernel_cache=isolation.kernel_cache_for(exercise, path))

    return grade
