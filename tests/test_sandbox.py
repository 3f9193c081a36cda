"""The sandbox the learner's process runs in (`grader.sandbox`), level by level, on a shell command:
what it may write, what it sees, which processes it leaves behind."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from grader import sandbox

ROOT = Path(__file__).resolve().parent.parent


def _run(level: str, script: str, tmp_path: Path, *, hide=(), **settings) -> tuple[int, str, Path]:
    """Run ``script`` in the sandbox at ``level``: (exit status, what it printed and what the
    sandbox said on its own channel, its scratch folder)."""
    import tempfile

    # Under /tmp itself, traversable by others: the "user" level runs the command as another user.
    root = Path(tempfile.mkdtemp(prefix="grade-sandbox-test-", dir="/tmp"))
    os.chmod(root, 0o711)
    scratch = root / "work"
    scratch.mkdir(exist_ok=True)
    (root / "view").mkdir()
    output = os.open(root / "output.txt", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    status_read, status_write = os.pipe()
    config = sandbox.Config(level=level, scratch=str(scratch), hide=[str(h) for h in hide], output_fd=output,
                            status_fd=status_write, view=str(root / "view"), expose=sandbox.runtime_paths(ROOT),
                            course=str(ROOT), conceal=sandbox.course_private_paths(ROOT), **settings)
    proc = sandbox.start(["/bin/sh", "-c", script], config, env=dict(os.environ, LC_ALL="C"))
    os.close(status_write)
    try:
        code = proc.wait(timeout=60)
    finally:
        sandbox.stop(proc)
    said = os.pread(output, 1 << 20, 0).decode(errors="replace") + os.read(status_read, 1 << 16).decode()
    os.close(output)
    os.close(status_read)
    return code, said, scratch


def _alive(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace").split("\0")
                if argv[0].endswith("sleep") and marker in argv:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _marker() -> str:
    """A sleep duration no other process on the machine uses: it finds our sleepers in /proc."""
    return f"300.{uuid.uuid4().int % 10**9:09d}"


def _levels() -> list[str]:
    available = sandbox.available_level()
    levels = ["partial"]
    if available == "namespaces":
        levels.insert(0, "namespaces")
    return levels


@pytest.mark.parametrize("level", _levels())
def test_a_setsid_daemon_dies_with_the_run(level, tmp_path):
    marker = _marker()
    code, said, _ = _run(level, f"(setsid sh -c 'sleep {marker}' &); (sleep {marker} &); sleep 0.2; "
                                f"echo alive=$(ps -eo args= | grep -cx 'sleep {marker}')", tmp_path)
    assert code == 0 and "alive=2" in said, said
    deadline = time.monotonic() + 5
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(marker) == [], "a process the learner's code started outlived the run"


@pytest.mark.skipif(sandbox.available_level() != "namespaces", reason="this machine cannot make namespaces")
def test_namespaces_level_makes_the_course_read_only_and_hides_folders(tmp_path):
    secret = tmp_path / "class"
    secret.mkdir()
    (secret / "bob.py").write_text("classmate's work\n")
    target = ROOT / f".sandbox-probe-{uuid.uuid4().hex[:8]}"
    script = (f"echo ok > scratch.txt && echo wrote-scratch; "
              f"echo x > {target} 2>/dev/null || echo course-read-only; "
              f"cat {secret}/bob.py 2>/dev/null || echo class-hidden; "
              f"ps -e -o pid= | wc -l; grep CapEff /proc/self/status; "
              f"kill -9 {os.getpid()} 2>/dev/null || echo cannot-signal-outside")
    code, said, scratch = _run("namespaces", script, tmp_path, hide=[secret])
    assert not target.exists()
    assert "wrote-scratch" in said and (scratch / "scratch.txt").read_text() == "ok\n"
    assert "course-read-only" in said and "class-hidden" in said and "classmate" not in said
    assert "CapEff:\t0000000000000000" in said
    assert "cannot-signal-outside" in said
    processes = int(said.split("class-hidden")[1].split()[0])
    assert processes <= 4, f"the learner's process sees {processes} processes: its PID namespace is not its own"


def test_partial_level_still_limits_file_size(tmp_path):
    code, said, scratch = _run("partial", f"head -c {sandbox.FILE_LIMIT + (1 << 20)} /dev/zero > big.bin; "
                                           "echo status=$?", tmp_path)
    assert (scratch / "big.bin").stat().st_size <= sandbox.FILE_LIMIT
    assert "status=0" not in said


def test_the_level_can_be_forced_and_is_described(monkeypatch):
    monkeypatch.setenv("GRADE_SANDBOX", "partial")
    assert sandbox.available_level() == "partial"
    assert "container" in sandbox.DESCRIPTIONS["partial"]  # it says how to get the strong one


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another user needs root")
def test_user_level_drops_to_an_unprivileged_user(tmp_path):
    probe = tmp_path / "root-only"
    probe.mkdir(mode=0o700)
    code, said, scratch = _run("user", f"id -u; echo x > scratch.txt && echo wrote-scratch; "
                                       f"echo y > {probe}/z 2>/dev/null || echo cannot-write-root-folder; "
                                       f"kill -0 {os.getpid()} 2>/dev/null || echo cannot-signal-the-judge", tmp_path)
    assert said.split()[0] == str(sandbox.DEFAULT_UID)
    assert "wrote-scratch" in said and "cannot-write-root-folder" in said and "cannot-signal-the-judge" in said
    assert not (probe / "z").exists()


def test_kill_children_ends_every_child_of_a_process():
    marker = _marker()
    parent = subprocess.Popen(["/bin/sh", "-c", f"sleep {marker} & sleep {marker} & wait"])
    deadline = time.monotonic() + 5
    while len(_alive(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_alive(marker)) == 2
    assert sandbox.kill_children(parent.pid) == 2
    parent.wait(timeout=5)
    assert _alive(marker) == []
