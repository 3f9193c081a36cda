"""The learner's progress: a small JSON file in the working tree, ignored by git.

``.grade/progress.json`` (or ``$GRADE_STATE_DIR/progress.json``)::

    {"version": 1,
     "exercises": {"1": {"state": "passed" | "failing", "first_run": "2026-12-01 10:02",
                         "last_run": "...", "passed_at": "...", "runs": 4, "mode": "gpu",
                         "best_fraction": 0.93, "best_gbps": 3980.1, "hints_shown": 2}}}

Three promises:

* **never half-written**: `save` writes a temporary file in the same folder, flushes it to disk,
  then `os.replace`s it over the old one (atomic on POSIX and Windows), so a run interrupted at
  any point leaves either the old file or the new one;
* **never a crash**: a file that cannot be parsed is moved aside (``progress.json.corrupt-<time>``,
  nothing is deleted) and progress starts empty, with a warning on stderr; a folder that cannot
  be written costs a warning, not the grading run;
* **no lost update** between two `grade` processes (say `grade watch` and `grade exercise` at
  once): read-modify-write happens under an advisory lock where the platform has one.

The same folder holds ``backups/`` (`grade reset`), ``bench/`` (`grade bench`) and ``batch/``
(`grade batch`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from grader.catalogue import ROOT

VERSION = 1
#: The one place that says what "when" looks like in the progress file and on screen.
TIME_FORMAT = "%Y-%m-%d %H:%M"
#: grader.bandwidth.MEASUREMENT_ERROR_FRACTION, repeated so that `grade list` never imports torch.
PLAUSIBLE_FRACTION = 1.03


def state_dir() -> Path:
    """``$GRADE_STATE_DIR`` if set (tests, read-only checkouts), else ``.grade/`` in the repository."""
    override = os.environ.get("GRADE_STATE_DIR")
    return Path(override) if override else ROOT / ".grade"


def state_path() -> Path:
    return state_dir() / "progress.json"


def now() -> str:
    return time.strftime(TIME_FORMAT)


def _warn(message: str) -> None:
    print(f"grade: warning: {message}", file=sys.stderr)


class State:
    """The parsed file. ``exercise(n)`` returns the (mutable) entry for exercise n."""

    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.data.setdefault("version", VERSION)
        if not isinstance(self.data.get("exercises"), dict):
            self.data["exercises"] = {}

    def exercise(self, number: int) -> dict[str, Any]:
        exercises = self.data["exercises"]
        entry = exercises.get(str(number))
        if not isinstance(entry, dict):
            entry = exercises[str(number)] = {}
        return entry

    def passed(self, number: int) -> bool:
        return self.exercise(number).get("state") == "passed"


def load() -> State:
    """The progress so far; empty (with a warning) when the file is missing or unreadable."""
    path = state_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return State({})
    except OSError as exc:
        _warn(f"cannot read {path} ({exc.strerror or exc}); showing empty progress")
        return State({})
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, found {type(data).__name__}")
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        stamp = time.strftime('%Y%m%d-%H%M%S')
        kept = "it was left where it is"
        for k in range(1, 1000):  # a unique name: two corrupt files in one second keep both
            aside = path.with_name(f"{path.name}.corrupt-{stamp}{'' if k == 1 else f'-{k}'}")
            if aside.exists():
                continue
            try:
                os.replace(path, aside)
                kept = f"it was moved to {aside}"
            except OSError:
                pass
            break
        _warn(f"{path} could not be read ({exc}); {kept} and progress starts empty")
        return State({})
    return State(data)


def save(state: State) -> bool:
    """Write atomically; False (and a warning) when the folder cannot be written."""
    path = state_path()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state.data, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return True
    except OSError as exc:
        _warn(f"progress not saved to {path} ({exc.strerror or exc})")
        return False
    finally:
        # After a successful replace the temporary name no longer exists; after a failure
        # (or an interruption) it must not be left behind beside the real file.
        with contextlib.suppress(OSError):
            tmp.unlink()


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """An advisory lock around read-modify-write (POSIX flock; elsewhere, none)."""
    try:
        import fcntl
    except ImportError:  # Windows: atomic replace still prevents corruption, not a lost update
        yield
        return
    lock_path = state_dir() / "progress.lock"
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def update(change: Callable[[State], Any]) -> Any:
    """Load, apply ``change(state)``, save; returns what ``change`` returned."""
    with _locked():
        state = load()
        result = change(state)
        save(state)
        return result


def describe_state(entry: dict[str, Any]) -> tuple[str, str]:
    """A short label and a rich style for an exercise's entry."""
    state = entry.get("state")
    if state == "passed":
        return "passed", "green"
    if state == "failing":
        return "failing", "red"
    return "not started", "dim"


def record_run(number: int, run) -> None:
    """Remember a graded run of the learner's own file (not `--from` files, not batch runs).

    ``best_fraction`` is the best fraction of the ceiling from any run whose performance was
    measured and plausible (at most `PLAUSIBLE_FRACTION`): a slow but correct kernel still shows
    how far it got; an impossible figure above the ceiling is not kept.
    """

    def change(state: State) -> None:
        entry = state.exercise(number)
        stamp = now()
        entry.setdefault("first_run", stamp)
        entry["last_run"] = stamp
        entry["runs"] = int(entry.get("runs") or 0) + 1
        entry["mode"] = run.mode
        if run.passed:
            entry.setdefault("passed_at", stamp)
            entry["state"] = "passed"
        elif entry.get("state") != "passed":  # a pass is never taken back by a later failure
            entry["state"] = "failing"
        perf = run.performance
        fraction = perf.fraction if perf else None
        if isinstance(fraction, (int, float)) and 0 < fraction <= PLAUSIBLE_FRACTION:
            if fraction > float(entry.get("best_fraction") or 0.0):
                entry["best_fraction"] = fraction
                entry["best_gbps"] = perf.achieved_gbps
                entry["best_gpu"] = perf.gpu

    update(change)


def next_hint(number: int, available: int) -> int:
    """How many hints to show now: one more than last time, up to all of them."""

    def change(state: State) -> int:
        entry = state.exercise(number)
        shown = min(available, int(entry.get("hints_shown") or 0) + 1)
        entry["hints_shown"] = shown
        return shown

    return update(change)


def reset_hints(number: int) -> None:
    """Start the hint tiers of exercise ``number`` over (`grade hint N --reset`)."""
    update(lambda state: state.exercise(number).pop("hints_shown", None))
