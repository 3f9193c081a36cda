"""Run an exercise's checks against a learner file in a child process, and survive anything.

The learner's kernel may raise, hang, corrupt the heap (the interpreter does no bounds checks)
or poison the CUDA context. The child process is the unit of failure: this module starts it,
reads its events (`grader.harness.plugin`), kills it when one check runs past its timeout,
and, after a crash or a timeout, starts a fresh child that skips every check already reported.
The crashed or hung check is reported with a sentence; the others still run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.catalogue import ROOT, Exercise

#: Seconds one check may take. The interpreter runs ~1 ms of Python per program instance.
CHECK_TIMEOUT = {"interpreter": 120.0, "gpu": 60.0}
MAX_RESTARTS = 6
#: Each hung check costs a whole timeout: after this many in a row, the rest are not run.
MAX_CONSECUTIVE_TIMEOUTS = 2
EXIT_RESTART = 75  # mirrors grader.harness.plugin.EXIT_RESTART (kept import-free here)

_SIGNALS = {
    signal.SIGSEGV: "a segmentation fault",
    signal.SIGABRT: "an abort (the C library found the heap corrupted)",
    signal.SIGBUS: "a bus error",
    signal.SIGFPE: "a floating-point exception",
    signal.SIGILL: "an illegal instruction",
    signal.SIGKILL: "SIGKILL (out of memory?)",
}


@dataclass
class CheckResult:
    nodeid: str
    name: str
    passed: bool
    skipped: bool = False
    message: str = ""
    kind: str = "ok"
    launches: list[int] = field(default_factory=list)
    performance: dict | None = None
    extra: dict | None = None

    @property
    def not_run(self) -> bool:
        return self.kind == "not_run"


@dataclass
class RunResult:
    exercise: int
    learner_file: str
    seed: int
    mode: str = "unknown"
    versions: dict = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    fatal: str | None = None  # a failure outside any check (the child could not start)
    wall_seconds: float = 0.0

    @property
    def performance(self) -> dict | None:
        for check in self.checks:
            if check.performance:
                return check.performance
        return None

    def extra(self, key: str):
        """A record a check left under ``key`` (``traffic``, ``byte_model``, ``amdahl``), or None."""
        return next((c.extra[key] for c in self.checks if c.extra and c.extra.get(key)), None)

    @property
    def passed(self) -> bool:
        if self.fatal or not self.checks:
            return False
        return all(c.passed or (c.skipped and c.kind != "not_run") for c in self.checks)


def _crash_message(returncode: int, stderr_tail: str, check_name: str | None) -> str:
    if returncode < 0:
        what = _SIGNALS.get(-returncode, f"signal {-returncode}")
    else:
        what = f"exit status {returncode}"
    during = f" during `{check_name}`" if check_name else ""
    detail = ""
    for marker in ("free():", "corrupted", "double free", "malloc():", "Segmentation fault", "Aborted", "munmap_chunk"):
        for line in stderr_tail.splitlines():
            if marker in line:
                detail = f" (the C library said: “{line.strip()}”)"
                break
        if detail:
            break
    return (
        f"the grader's process died with {what}{during}{detail}: your kernel most likely read or "
        "wrote far outside its tensors, past the grader's guard regions (an unmasked load or "
        "store, or an offset that ignores the row stride). The grader restarted for the next check."
    )


def _timeout_message(seconds: float, check_name: str) -> str:
    return (
        f"`{check_name}` did not finish within {seconds:.0f} s: does a loop in your kernel or "
        "launcher never end (a `while` whose condition never changes, a loop step of 0), or does "
        "the grid have far more programs than the data needs?"
    )


def run_checks(exercise: Exercise, learner_file: str | Path, *, seed: int, interpreter: bool = False,
               check_timeout: float | None = None, select: str | None = None) -> RunResult:
    """Run ``exercise``'s spec against ``learner_file`` and collect one result per check."""
    learner_file = str(Path(learner_file).resolve())
    result = RunResult(exercise=exercise.number, learner_file=learner_file, seed=seed)
    started_at = time.monotonic()
    collected: list[str] = []
    names: dict[str, str] = {}
    done: dict[str, CheckResult] = {}
    gave_up = ""
    consecutive_timeouts = 0

    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        events_path = Path(tmp) / "events.jsonl"
        done_path = Path(tmp) / "done.txt"
        for attempt in range(MAX_RESTARTS + 1):
            done_path.write_text("\n".join(done))
            stderr_path = Path(tmp) / f"stderr-{attempt}.txt"
            cmd = [sys.executable, "-m", "grader.harness.child", str(exercise.spec_file),
                   "--learner-file", learner_file, "--grade-seed", str(seed),
                   "--grade-events", str(events_path), "--grade-done", str(done_path)]
            if interpreter:
                cmd.append("--interpreter")
            if select:
                cmd += ["-k", select]
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
            env.setdefault("PYTHONFAULTHANDLER", "1")
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # other plugins cost seconds and can import Triton early
            offset = events_path.stat().st_size if events_path.exists() else 0
            running: str | None = None
            running_since = 0.0
            timed_out: str | None = None

            def apply(event: dict) -> None:
                nonlocal running, running_since
                kind = event.get("event")
                if kind == "mode":
                    result.mode = event["mode"]
                    result.versions = {k: event.get(k) for k in ("triton", "torch", "python")}
                elif kind == "collected":
                    for nodeid, name in zip(event["nodeids"], event["names"]):
                        if nodeid not in names:
                            collected.append(nodeid)
                            names[nodeid] = name
                elif kind == "start":
                    running, running_since = event["nodeid"], time.monotonic()
                elif kind == "result":
                    done[event["nodeid"]] = CheckResult(
                        nodeid=event["nodeid"], name=event["name"], passed=event["passed"],
                        skipped=event.get("skipped", False), message=event.get("message", ""),
                        kind=event.get("kind", "ok"), launches=event.get("launches") or [],
                        performance=event.get("performance"), extra=event.get("extra"))
                    if running == event["nodeid"]:
                        running = None

            with open(stderr_path, "wb") as stderr, open(Path(tmp) / f"stdout-{attempt}.txt", "wb") as stdout:
                proc = subprocess.Popen(cmd, cwd=os.getcwd(), env=env, stdout=stdout, stderr=stderr,
                                        start_new_session=True)
                try:
                    while proc.poll() is None:
                        offset, events = _read_events(events_path, offset)
                        for event in events:
                            apply(event)
                        limit = check_timeout or CHECK_TIMEOUT.get(result.mode, CHECK_TIMEOUT["interpreter"])
                        if running and time.monotonic() - running_since > limit:
                            timed_out = running
                            _kill(proc)
                            done[running] = CheckResult(running, names.get(running, running), False,
                                                        message=_timeout_message(limit, names.get(running, running)),
                                                        kind="timeout")
                            running = None
                            break
                        time.sleep(0.05)
                except BaseException:  # Ctrl-C (grade watch, grade batch): never leave the child running
                    _kill(proc)
                    raise
            offset, events = _read_events(events_path, offset)  # anything written just before exit
            for event in events:
                apply(event)
            returncode = proc.returncode
            stderr_tail = stderr_path.read_text(errors="replace")[-4000:]
            if timed_out:
                consecutive_timeouts += 1
                if consecutive_timeouts >= MAX_CONSECUTIVE_TIMEOUTS:
                    gave_up = f"not run: {consecutive_timeouts} checks in a row did not finish, so the grader stopped"
                    break
                continue
            consecutive_timeouts = 0
            if running is not None and running not in done:
                done[running] = CheckResult(running, names.get(running, running), False,
                                            message=_crash_message(returncode, stderr_tail, names.get(running)),
                                            kind="crash")
                continue
            if returncode == EXIT_RESTART:
                continue
            if returncode not in (0, 1, 2, 5) and not collected:
                result.fatal = (f"the checks could not start (exit status {returncode}):\n"
                                + stderr_tail.strip()[-1500:])
            if returncode in (2, 3, 4) and not done:
                result.fatal = "the checks could not start:\n" + (stderr_tail.strip() or
                    (Path(tmp) / f"stdout-{attempt}.txt").read_text(errors="replace")).strip()[-1500:]
            break
        else:
            gave_up = f"not run: the grader stopped after restarting {MAX_RESTARTS} times (crashes or hangs)"

    for nodeid in collected:
        if nodeid in done:
            result.checks.append(done[nodeid])
        else:
            result.checks.append(CheckResult(nodeid, names[nodeid], False, skipped=True,
                                             message=gave_up or "not run", kind="not_run"))
    for nodeid, check in done.items():  # an import failure reports before collection
        if nodeid not in names:
            result.checks.append(check)
    result.wall_seconds = time.monotonic() - started_at
    return result


def _read_events(path: Path, offset: int) -> tuple[int, list[dict]]:
    if not path.exists():
        return offset, []
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1  # only whole lines; a partial one is read next time
    events = []
    for line in data[:end].splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return offset + end, events


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()
