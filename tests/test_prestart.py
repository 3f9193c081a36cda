"""grader.prestart: a process forked from a template runs as one started from scratch would, says how it
ended, holds nothing of the template, and ends when the process that asked for it goes away."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import pytest

from grader import catalogue, prestart
from grader.commands import isolation

ROOT = catalogue.ROOT


def report(argv: list[str]) -> int:
    """An entry point: says what it was given on its stdout, then exits with ``argv[0]``."""
    fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    said = {"argv": argv, "marker": os.environ.get("PRESTART_MARKER"), "cwd": os.getcwd(), "fds": fds,
            "sid": os.getsid(0) == os.getpid(), "torch": "torch" in sys.modules}
    os.write(1, json.dumps(said).encode())
    return int(argv[0])


def kills_itself(argv: list[str]) -> int:
    os.kill(os.getpid(), signal.SIGKILL)
    return 0


def sleeps(argv: list[str]) -> int:
    time.sleep(600)
    return 0


@pytest.fixture(scope="module")
def template():
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    made = prestart.Template(["torch"], env=env)
    yield made
    made.close()


def _gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_started_process_gets_its_arguments_environment_folder_and_descriptors(template, tmp_path):
    out_read, out_write = os.pipe()
    extra_read, extra_write = os.pipe()
    started = template.start("tests.test_prestart:report", ["3", "a b"], env={"PRESTART_MARKER": "m1", "PATH": "/bin"},
                             cwd=str(tmp_path), fds={1: out_write, 9: extra_read})
    os.close(out_write)
    assert started.wait(timeout=60) == 3
    said = json.loads(os.read(out_read, 1 << 16))
    assert said["argv"] == ["3", "a b"] and said["marker"] == "m1" and said["cwd"] == str(tmp_path)
    assert said["torch"], "the template's imports are done before the process starts"
    assert said["sid"], "a started process leads a session of its own"
    # 0, 1 and 2, the one it was given at its number, and the descriptor that listed them: nothing of the template
    assert 9 in said["fds"] and len([fd for fd in said["fds"] if fd not in (0, 1, 2, 9)]) == 1, said["fds"]
    for fd in (out_read, extra_read, extra_write):
        os.close(fd)


def test_a_signal_that_ends_the_process_is_its_status(template, tmp_path):
    started = template.start("tests.test_prestart:kills_itself", [], env={}, cwd=str(tmp_path), fds={})
    assert started.wait(timeout=60) == -signal.SIGKILL
    assert started.poll() == -signal.SIGKILL


def test_wait_says_when_the_process_is_still_running_and_kill_ends_it(template, tmp_path):
    started = template.start("tests.test_prestart:sleeps", [], env={}, cwd=str(tmp_path), fds={})
    with pytest.raises(Exception, match="timed out"):
        started.wait(timeout=0.2)
    assert started.poll() is None
    started.kill()
    assert started.wait(timeout=30) == -signal.SIGKILL


def test_the_process_ends_when_the_one_that_asked_for_it_goes_away(template, tmp_path):
    started = template.start("tests.test_prestart:sleeps", [], env={}, cwd=str(tmp_path), fds={})
    os.kill(started.pid, 0)  # running
    started._connection.close()  # what the requester's death does to its end
    assert _gone(started.pid, 10), "the started process outlived the process that asked for it"


def test_a_grading_without_templates_gives_the_same_verdict(monkeypatch):
    exercise = catalogue.get(1)
    wrong = exercise.wrong_dir / "no_tail_mask.py"
    verdicts = []
    for setting in ("0", "1"):
        monkeypatch.setenv("GRADE_PRESTART", setting)
        run = isolation.run_checks(exercise, wrong, seed=5, interpreter=True, select="matches_reference and n1-")
        verdicts.append([(c.name, c.passed, str(c.kind)) for c in run.checks])
    assert verdicts[0] == verdicts[1] and not any(passed for _, passed, _ in verdicts[0]), verdicts


def test_the_judge_says_when_the_learners_process_started_was_ready_and_ended(monkeypatch):
    """The judge's last event, ``timings``: the learner's process started before its hello came, the stages of
    its start in order (torch, Triton, the file) and within that wait, and its end measured (where a grading's
    first result waits: tools/device/startup_probe.py prints it)."""
    monkeypatch.setenv("GRADE_PRESTART", "0")  # started from scratch, as every first grading is
    exercise = catalogue.get(1)
    events = []
    original = isolation.apply_event

    def keep(run, data, *rest):
        events.append(data)
        return original(run, data, *rest)

    monkeypatch.setattr(isolation, "apply_event", keep)
    run = isolation.run_checks(exercise, exercise.solution_path, seed=5, interpreter=True,
                               select="matches_reference and n1-fp32")
    assert run.passed
    timings = [e for e in events if e.get("event") == "timings"]
    assert len(timings) == 1 and events[-1] is timings[0], [e.get("event") for e in events]
    learner = timings[0]["learner"]
    assert 0 <= learner["started"] < learner["ready"], learner
    stages = learner["stages"]
    assert list(stages) == ["torch", "triton", "file_imported"], stages  # no trace in the interpreter
    assert 0 < stages["torch"] <= stages["triton"] <= stages["file_imported"] < learner["ready"] - learner["started"]
    assert timings[0]["twin"] is None and timings[0]["twin_ended_s"] is None  # the clock's twin: a GPU's only
    assert 0 <= timings[0]["learner_ended_s"] < 10
