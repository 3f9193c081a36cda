"""The learner's progress: a small JSON file in the working tree, ignored by git.

Written atomically (a temporary file, then `os.replace`), so an interrupted run never leaves
it half-written; an unreadable file is treated as empty rather than crashing the CLI.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from grader.catalogue import ROOT


def state_path() -> Path:
    override = os.environ.get("GRADE_STATE_DIR")
    return (Path(override) if override else ROOT / ".grade") / "progress.json"


class State:
    def __init__(self, data: dict[str, Any]):
        self.data = data

    def exercise(self, number: int) -> dict[str, Any]:
        return self.data.setdefault("exercises", {}).setdefault(str(number), {})


def load() -> State:
    try:
        data = json.loads(state_path().read_text())
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    return State(data)


def save(state: State) -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state.data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def describe_state(entry: dict[str, Any]) -> tuple[str, str]:
    state = entry.get("state")
    if state == "passed":
        return f"passed {entry.get('passed_at', '')}".strip(), "green"
    if state == "failing":
        return f"failing ({entry.get('last_run', '')})".strip(), "red"
    return "not started", "dim"


def record_run(number: int, run) -> None:
    state = load()
    entry = state.exercise(number)
    today = time.strftime("%Y-%m-%d %H:%M")
    entry["last_run"] = today
    entry["mode"] = run.mode
    if run.passed:
        if entry.get("state") != "passed":
            entry["passed_at"] = today
        entry["state"] = "passed"
    elif entry.get("state") != "passed":
        entry["state"] = "failing"
    perf = run.performance
    if perf and perf.get("fraction") is not None and perf.get("passed"):
        entry["best_fraction"] = max(entry.get("best_fraction") or 0.0, perf["fraction"])
    save(state)


def next_hint(number: int, available: int) -> int:
    """How many hints to show now: one more than last time, up to all of them."""
    state = load()
    entry = state.exercise(number)
    shown = min(available, int(entry.get("hints_shown", 0)) + 1)
    entry["hints_shown"] = shown
    save(state)
    return shown
