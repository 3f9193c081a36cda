"""Files an honest but unlucky learner can write, and what `grade` does with them: every one gets a
sentence and a bounded time, and no process or temporary folder outlives the run.

Each test grades a small file written here, on one check (``--select``) and with short clocks,
in the interpreter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from grader import catalogue
from grader.commands import cli

ROOT = catalogue.ROOT
SOLUTION = catalogue.get(1).solution_path.read_text()
ONE_CHECK = "matches_reference and n1025 and fp32"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_STATE_DIR", str(tmp_path / "state"))


def _learner(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}_{uuid.uuid4().hex[:8]}.py"
    path.write_text(text)
    return path


def _processes_running(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if marker in Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _run_module(tmp_path: Path, path: Path, *, select: str = ONE_CHECK, timeout: float = 10,
                file_timeout: float | None = None):
    from grader.commands import isolation

    return isolation.run_checks(catalogue.get(1), path, seed=7, interpreter=True, select=select,
                                check_timeout=timeout, file_timeout=file_timeout)


def test_an_endless_loop_at_import_is_stopped_with_a_sentence(tmp_path):
    path = _learner(tmp_path, "loops_at_import", "while True:\n    pass\n")
    started = time.monotonic()
    run = _run_module(tmp_path, path, timeout=5)
    assert time.monotonic() - started < 60
    assert not run.passed
    said = [c.message for c in run.checks if c.failed] + [run.fatal or ""]
    assert any("importing your file did not finish within 5 s" in m for m in said), said



def test_a_call_that_outlasts_its_check_names_the_checks_clock(tmp_path):
    """The message gives the check's clock, not the longer limit of the request that was waiting."""
    slow = SOLUTION.replace("def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:",
                            "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    import time\n"
                            "    time.sleep(60)")
    started = time.monotonic()
    run = _run_module(tmp_path, _learner(tmp_path, "sleeps", slow), timeout=4)
    assert time.monotonic() - started < 45
    said = [c.message for c in run.checks if c.failed]
    assert said and "did not finish within 4 s" in said[0], said

def test_the_whole_file_clock_bounds_a_run(tmp_path):
    """Every check sleeps 2 s, far inside its own 60 s clock; nine checks match the selection (n1, n2, n3,
    n127, ...), 18 s of sleep, so only the whole file's 15 s clock can stop the run, after a first check that
    passed. (Sleeps of 8 s under a 25 s clock proved the same in 30 s. On two busy cores, import and the
    first check took 4-6 s: 15 s leaves room for a slower CI runner.)"""
    slow = SOLUTION.replace("def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:",
                            "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    import time\n"
                            "    time.sleep(2)")
    path = _learner(tmp_path, "slow", slow)
    started = time.monotonic()
    run = _run_module(tmp_path, path, select="matches_reference and fp32 and (n1 or n2 or n3)", timeout=60,
                      file_timeout=15)
    assert time.monotonic() - started < 40
    assert not run.passed
    assert run.checks[0].passed, run.checks[0].message  # the clock counts across checks, not within one
    messages = [c.message for c in run.checks]
    assert any("ran past its 15 s clock" in m for m in messages), messages


@pytest.mark.parametrize("leftover", [
    "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,)).start()\n",
    "import atexit, time\natexit.register(time.sleep, 600)\n",
], ids=["non-daemon-thread", "atexit-sleep"])
def test_a_correct_file_that_never_exits_still_passes_in_bounded_time(tmp_path, leftover):
    path = _learner(tmp_path, "never_exits", SOLUTION + "\n" + leftover)
    started = time.monotonic()
    run = _run_module(tmp_path, path, timeout=30)
    assert time.monotonic() - started < 90
    assert run.passed, [c.message for c in run.checks]
    assert any("threading" in n or "atexit" in n for n in run.notices)  # and the class grader would refuse it
    assert _processes_running(path.stem) == []


def test_exit_at_import_says_what_happened(tmp_path):
    path = _learner(tmp_path, "exits", "import os\nos._exit(0)\n")
    run = _run_module(tmp_path, path)
    said = " ".join(c.message for c in run.checks if c.failed)
    assert "importing your file ended the process" in said and "exit status 0" in said, said


def test_keyboard_interrupt_inside_the_function_is_a_learner_exception(tmp_path):
    text = SOLUTION.replace('    out = torch.empty_like(x)', '    raise KeyboardInterrupt\n    out = torch.empty_like(x)', 1)
    run = _run_module(tmp_path, _learner(tmp_path, "interrupts", text))
    said = [c.message for c in run.checks if c.failed]
    assert said and "your code raised KeyboardInterrupt" in said[0], said
    assert "outside its tensors" not in said[0]


def test_a_flood_on_stderr_is_cut_and_the_grader_stays_small(tmp_path):
    flood = ("import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(400):\n    sys.stderr.write(chunk)\n")
    path = _learner(tmp_path, "floods", flood + SOLUTION)
    run = _run_module(tmp_path, path, timeout=60)
    said = " ".join(c.message for c in run.checks if c.failed)
    assert "File too large" in said, said  # the sandbox caps every file, stderr included
    import resource

    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 3 * (1 << 20)  # KiB: under 3 GiB


@pytest.mark.parametrize("option", ["--timeout", "--file-timeout"])
def test_a_clock_must_be_positive(option, capsys):
    assert cli.main(["exercise", "1", "--from", str(catalogue.get(1).solution_path), option, "-1"]) == 2
    assert "greater than 0" in capsys.readouterr().err


def test_a_latin1_file_with_a_coding_line_is_graded_as_python_reads_it(tmp_path):
    text = "# -*- coding: latin-1 -*-\n# caf\xe9 au lait\n" + SOLUTION
    path = tmp_path / f"latin1_{uuid.uuid4().hex[:6]}.py"
    # The solution's docstring has characters latin-1 lacks (an em dash): they become "?".
    path.write_bytes(text.encode("latin-1", errors="replace"))
    run = _run_module(tmp_path, path)
    assert run.passed, [c.message for c in run.checks] + [run.fatal]
    from grader.commands import batch

    assert batch.precheck(path) is None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_to_grade_ends_every_process_and_removes_its_folders(tmp_path, sig):
    hang = SOLUTION.replace("def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:",
                            "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    while True:\n        pass")
    path = _learner(tmp_path, "hangs", hang)
    tmp = Path(tempfile.mkdtemp(prefix="grade-signal-test-"))
    proc = subprocess.Popen([sys.executable, "-m", "grader.commands.cli", "exercise", "1", "--from", str(path), "--interpreter"],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _processes_running(f"{path.stem}.py"):
            time.sleep(0.2)
        assert _processes_running(f"{path.stem}.py"), "the learner's process never started"
        time.sleep(1)
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 128 + sig
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _processes_running(path.stem):
        time.sleep(0.2)
    assert _processes_running(path.stem) == []
    assert list(tmp.iterdir()) == [], "a temporary folder was left behind"


def test_ctrl_c_stops_a_batch_at_once_and_leaves_no_process(tmp_path):
    hang = SOLUTION.replace("def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:",
                            "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    while True:\n        pass")
    folder = tmp_path / "class"
    folder.mkdir()
    marker = uuid.uuid4().hex[:8]
    for name in ("ann", "ben"):
        (folder / f"{name}_{marker}.py").write_text(hang)
    out = tmp_path / "out"
    # SIGINT as a terminal delivers it: a test run started in the background (``pytest ... &``) hands its
    # children SIGINT ignored, and an ignored Ctrl-C would stop nothing.
    proc = subprocess.Popen([sys.executable, "-m", "grader.commands.cli", "batch", str(folder), "--exercise", "1", "--jobs", "2",
                             "--interpreter", "--out", str(out), "--select", ONE_CHECK],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and len({p for p in _processes_running(marker)}) < 2:
            time.sleep(0.2)
        time.sleep(2)
        proc.send_signal(signal.SIGINT)  # one Ctrl-C
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _processes_running(marker):
        time.sleep(0.2)
    assert _processes_running(marker) == []


def test_reset_says_why_when_the_backups_folder_cannot_be_made(tmp_path):
    from grader.commands import workspace

    repo = tmp_path / "course"
    (repo / "exercises").mkdir(parents=True)
    stub = repo / "exercises" / "ex01_vector_add.py"
    stub.write_text("# the stub\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "stub"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    stub.write_text("# the stub\n# my work\n")
    in_the_way = tmp_path / "state-file"
    in_the_way.write_text("a file where the backups folder would go")
    with pytest.raises(workspace.WorkspaceError, match="could not be backed up") as info:
        workspace.reset_file(stub, backup_dir=in_the_way / "backups")
    assert "your file is untouched" in str(info.value)
    assert stub.read_text().endswith("# my work\n")


def test_corrupt_progress_files_keep_unique_backup_names(tmp_path, monkeypatch):
    from grader.commands import progress_file

    monkeypatch.setattr(progress_file.time, "strftime", lambda fmt: "20261201-120000")
    for _ in range(3):
        progress_file.state_path().parent.mkdir(parents=True, exist_ok=True)
        progress_file.state_path().write_text("{not json")
        progress_file.load()
    kept = sorted(p.name for p in progress_file.state_path().parent.glob("progress.json.corrupt-*"))
    assert kept == ["progress.json.corrupt-20261201-120000", "progress.json.corrupt-20261201-120000-2",
                    "progress.json.corrupt-20261201-120000-3"]


def test_checking_an_unused_allocation_costs_the_judge_no_memory_of_its_size():
    """One unused 1 GiB `torch.empty` in a launcher once grew the judge by 3.3 GiB: the checks built
    full-size masks and copies of every intercepted allocation. Measured in a fresh process: the peak
    resident memory after the checks, less the peak after the allocation itself was filled."""
    probe = (
        "import resource, torch\n"
        "from grader.wire import guards\n"
        "out = guards.guard_output('scratch', (2**27,), (1,), torch.float32, 'cpu')\n"
        "out.buffer[3] = 1.0\n"  # one write before the start: the checks must still find it
        "filled = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "found = out.outside_writes()\n"
        "grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - filled\n"
        "print(found, grown)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    found, grown = done.stdout.rsplit(" ", 1)
    assert found == "{'before': 1}", done.stdout + done.stderr
    assert int(grown) < 64 * 1024, f"the checks of a 512 MiB allocation grew the process by {int(grown) >> 10} MiB"
