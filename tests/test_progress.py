"""The progress file: round trip, a pass is never taken back, interrupted writes, corrupt files,
hint tiers, and no lost update between two writers."""

from __future__ import annotations

import json
import os
import threading

import pytest

from grader.commands import progress_file
from grader.wire.results import CheckRecord as CheckResult, PerformanceRecord, RunResult


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    monkeypatch.setenv("GRADE_STATE_DIR", str(folder))
    return folder


def make_run(passed: bool, *, fraction: float | None = None, mode: str = "interpreter") -> RunResult:
    check = CheckResult("spec::test_matches_reference[n3-fp32]", "matches_reference[n3-fp32]", passed,
                        message="" if passed else "wrong at index 2")
    checks = [check]
    if fraction is not None:
        checks.append(CheckResult("spec::test_performance", "performance", True,
                                  performance=PerformanceRecord(passed=fraction >= 0.8, verdict="", fraction=fraction,
                                                                achieved_gbps=round(4272 * fraction, 1),
                                                                gpu="NVIDIA H200")))
    return RunResult(exercise=1, learner_file="exercises/ex01_vector_add.py", seed=1, mode=mode, checks=checks)


def test_state_path_follows_grade_state_dir(state_dir):
    assert progress_file.state_path() == state_dir / "progress.json"
    assert progress_file.state_dir() == state_dir


def test_round_trip_of_a_failing_then_passing_run(state_dir):
    progress_file.record_run(1, make_run(False))
    entry = progress_file.load().exercise(1)
    assert entry["state"] == "failing" and entry["runs"] == 1 and "passed_at" not in entry
    progress_file.record_run(1, make_run(True))
    on_disk = json.loads((state_dir / "progress.json").read_text())
    entry = on_disk["exercises"]["1"]
    assert on_disk["version"] == progress_file.VERSION
    assert entry["state"] == "passed" and entry["runs"] == 2
    assert entry["passed_at"] == entry["last_run"] and entry["first_run"] <= entry["passed_at"]
    assert progress_file.describe_state(entry) == ("passed", "green")
    assert progress_file.describe_state({}) == ("not started", "dim")


def test_a_pass_is_never_taken_back_and_keeps_its_date():
    progress_file.record_run(1, make_run(True))
    first_pass = progress_file.load().exercise(1)["passed_at"]
    progress_file.record_run(1, make_run(False))
    entry = progress_file.load().exercise(1)
    assert entry["state"] == "passed" and entry["passed_at"] == first_pass and entry["runs"] == 2


def test_best_fraction_keeps_the_best_plausible_measurement():
    progress_file.record_run(1, make_run(True, fraction=0.71))
    progress_file.record_run(1, make_run(True, fraction=0.93))
    progress_file.record_run(1, make_run(True, fraction=0.85))
    progress_file.record_run(1, make_run(True, fraction=1.40))  # above the ceiling: a measurement error
    entry = progress_file.load().exercise(1)
    assert entry["best_fraction"] == 0.93 and entry["best_gbps"] == round(4272 * 0.93, 1)
    assert entry["best_gpu"] == "NVIDIA H200"


def test_interrupted_between_write_and_replace_keeps_the_old_file(state_dir, monkeypatch):
    progress_file.record_run(1, make_run(True))
    before = (state_dir / "progress.json").read_bytes()

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the learner pressed Ctrl-C after the temporary file was written

    with monkeypatch.context() as patched:
        patched.setattr(progress_file.os, "replace", killed)
        with pytest.raises(KeyboardInterrupt):
            progress_file.record_run(2, make_run(False))
    assert (state_dir / "progress.json").read_bytes() == before
    assert sorted(p.name for p in state_dir.iterdir()) == ["progress.json", "progress.lock"]  # no temp left
    assert progress_file.load().passed(1) and progress_file.load().exercise(2) == {}


def test_a_temporary_file_left_by_a_killed_process_is_ignored(state_dir):
    progress_file.record_run(1, make_run(True))
    (state_dir / "progress.json.4242.tmp").write_text('{"exercises": {"1": {"sta')  # killed mid-write
    assert progress_file.load().passed(1)
    progress_file.record_run(2, make_run(False))
    assert progress_file.load().exercise(2)["state"] == "failing"


@pytest.mark.parametrize("content", [b'{"exercises": {"1": {', b"[1, 2, 3]", b"\xff\xfe not utf-8", b""],
                         ids=["truncated", "not-an-object", "binary", "empty"])
def test_a_corrupt_file_is_moved_aside_with_a_warning_never_a_crash(state_dir, capsys, content):
    state_dir.mkdir(parents=True)
    (state_dir / "progress.json").write_bytes(content)
    state = progress_file.load()
    assert state.data["exercises"] == {}
    err = capsys.readouterr().err
    assert "could not be read" in err and "progress starts empty" in err
    kept = list(state_dir.glob("progress.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == content  # nothing deleted
    progress_file.record_run(1, make_run(True))
    assert progress_file.load().passed(1)
    assert capsys.readouterr().err == ""  # the new file is fine: no second warning


def test_malformed_entries_are_replaced_not_fatal(state_dir):
    state_dir.mkdir(parents=True)
    (state_dir / "progress.json").write_text(json.dumps({"exercises": {"1": "passed", "2": None}}))
    assert progress_file.load().exercise(1) == {}
    (state_dir / "progress.json").write_text(json.dumps({"exercises": [1, 2]}))
    assert progress_file.load().exercise(3) == {}
    progress_file.record_run(1, make_run(True))
    assert progress_file.load().passed(1)


def test_an_unwritable_state_folder_costs_a_warning_not_the_run(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GRADE_STATE_DIR", str(blocker / "state"))
    progress_file.record_run(1, make_run(True))  # must not raise
    assert "progress not saved" in capsys.readouterr().err


def test_hints_come_in_tiers_and_can_start_over():
    assert [progress_file.next_hint(1, 3) for _ in range(5)] == [1, 2, 3, 3, 3]
    assert progress_file.next_hint(2, 3) == 1  # per exercise
    progress_file.reset_hints(1)
    assert progress_file.next_hint(1, 3) == 1
    progress_file.record_run(1, make_run(False))
    assert progress_file.load().exercise(1)["hints_shown"] == 1  # a grading run keeps the hint tier


def test_two_writers_at_once_lose_no_update():
    def bump(state):
        entry = state.exercise(1)
        entry["count"] = entry.get("count", 0) + 1

    def writer():
        for _ in range(15):
            progress_file.update(bump)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if os.name == "posix":  # the advisory lock exists only where fcntl does
        assert progress_file.load().exercise(1)["count"] == 60
