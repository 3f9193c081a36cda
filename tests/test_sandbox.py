"""The sandbox the learner's process runs in (`grader.learner.sandbox`), level by level, on a shell command:
what it may write, what it sees, which processes it leaves behind."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from grader.learner import sandbox

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
    # The user level takes others' access to what it conceals: never the checkout's own folders here.
    options = dict(view=str(root / "view"), expose=sandbox.runtime_paths(ROOT), course=str(ROOT),
                   conceal=sandbox.course_private_paths(ROOT) if level == "namespaces" else [])
    options.update(settings)
    config = sandbox.Config(level=level, scratch=str(scratch), hide=[str(h) for h in hide], output_fd=output,
                            status_fd=status_write, **options)
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


# --- the contract at every level ----------------------------------------------------------------------

NAMESPACES = pytest.mark.skipif(sandbox.available_level() != "namespaces", reason="this machine cannot make namespaces")
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another user needs root")


def test_the_learners_environment_is_allow_listed(tmp_path):
    source = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm", "CUDA_VISIBLE_DEVICES": "1",
              "TRITON_PRINT_AUTOTUNING": "1", "TRITON_CACHE_DIR": "/home/me/.triton", "PYTORCH_CUDA_ALLOC_CONF": "x",
              "AWS_SECRET_ACCESS_KEY": "planted", "GITHUB_TOKEN": "planted", "GRADE_STATE_DIR": "/home/me/state",
              "PYTEST_ADDOPTS": "--learner-file=/class/bob.py", "LD_PRELOAD": "/tmp/evil.so", "HOME": "/root",
              "MY_RUN_MARK": "kept", sandbox.PASS_VARIABLE: "MY_RUN_MARK"}
    env = sandbox.learner_environment(source, scratch=tmp_path, course=ROOT, interpreter=True)
    assert "planted" not in env.values() and "/class/bob.py" not in " ".join(env.values())
    assert not {"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "GRADE_STATE_DIR", "PYTEST_ADDOPTS", "LD_PRELOAD"} & set(env)
    for kept in ("PATH", "LANG", "LC_ALL", "TERM", "CUDA_VISIBLE_DEVICES", "TRITON_PRINT_AUTOTUNING",
                 "PYTORCH_CUDA_ALLOC_CONF", "MY_RUN_MARK"):
        assert env[kept] == source[kept], kept
    assert env["HOME"] == str(tmp_path) and env["TMPDIR"].startswith(str(tmp_path))
    assert env["TRITON_CACHE_DIR"].startswith(str(tmp_path)) and env["TRITON_INTERPRET"] == "1"
    assert "TRITON_INTERPRET" not in sandbox.learner_environment(source, scratch=tmp_path, course=ROOT,
                                                                 interpreter=False)


def test_the_runtime_shows_no_part_of_the_course_but_its_grader():
    shown = sandbox.runtime_paths(ROOT)
    assert not any(sandbox._inside(ROOT, path) for path in shown), shown
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    inside = [path for path in shown if sandbox._inside(path, ROOT)]
    assert all(path in prefixes or path.endswith("-packages") for path in inside), inside
    assert any(sandbox._inside(sys.executable, path) for path in shown)
    private = sandbox.course_private_paths(ROOT)
    assert str(ROOT / "solutions") in private and str(ROOT / "tests") in private
    assert any(path.endswith("ex01_vector_add/natural") for path in private)


def test_a_virtual_environment_inside_the_course_is_shown_but_not_the_course(tmp_path, monkeypatch):
    """README's install makes `.venv` inside the course: the learner's Python lives there."""
    course = tmp_path / "course"
    venv = course / ".venv"
    (venv / "lib").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "exec_prefix", str(venv))
    shown = sandbox.runtime_paths(course)
    assert str(venv) in shown
    assert str(course) not in shown and not any(sandbox._inside(course, path) for path in shown)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))  # a prefix holding the course: never shown
    assert str(tmp_path) not in sandbox.runtime_paths(course)


@NAMESPACES
def test_namespaces_level_shows_only_the_runtime_and_runs_as_the_sandbox_user(tmp_path):
    secret = tmp_path / "root-only.txt"
    secret.write_text("root's eyes only\n")
    secret.chmod(0o600)
    script = (f"id -u; ls / | tr '\\n' ' '; echo; ls {ROOT} | tr '\\n' ' '; echo; "
              f"cat {ROOT}/solutions/ex01_vector_add.py 2>/dev/null || echo no-solutions; "
              f"ls {ROOT}/grader/exercises/ex01_vector_add/natural 2>/dev/null | wc -l; "
              f"cat {secret} 2>/dev/null || echo no-secret; echo note > /dev/shm/left-note && echo shm-writable; "
              f"echo note > /tmp/left-note && echo tmp-writable; ls /proc | grep -c '^[0-9]'")
    before = set(os.listdir("/dev/shm")), set(os.listdir("/tmp"))
    code, said, _ = _run("namespaces", script, tmp_path)
    lines = said.splitlines()
    if os.geteuid() == 0:
        assert lines[0] == str(sandbox.DEFAULT_UID), said
    assert "home" not in lines[1].split() and "root" not in lines[2].split(), said
    assert lines[2].split() == ["grader"], said
    assert "no-solutions" in said and "no-secret" in said and "root's eyes" not in said
    assert "shm-writable" in said and "tmp-writable" in said
    assert int(lines[-1]) <= 3, f"the learner's process sees {lines[-1]} processes"
    assert lines[lines.index("no-solutions") + 1] == "0", "the natural files are in the learner's root"
    assert not os.path.exists("/dev/shm/left-note") and not os.path.exists("/tmp/left-note")
    assert (set(os.listdir("/dev/shm")) - before[0]) == set() or all(
        os.lstat(f"/dev/shm/{n}").st_uid != sandbox.DEFAULT_UID for n in set(os.listdir("/dev/shm")) - before[0])


@NAMESPACES
def test_the_learners_process_can_make_no_user_namespace(tmp_path):
    """A new user namespace would hand the learner's process every capability over what it owns (a mount
    namespace where it mounts what it likes): its own namespace's limit is 0, so a single-threaded
    process (a shell; a forked child of Python) is refused too, not only one whose threads the kernel
    refuses (tests/hostile/sandbox/remount_writable.py)."""
    code, said, _ = _run("namespaces", "cat /proc/sys/user/max_user_namespaces; "
                         "unshare --user --mount true 2>/dev/null && echo made-one || echo refused", tmp_path)
    assert said.split()[-2:] == ["0", "refused"], said


@NAMESPACES
def test_memory_past_the_limit_fails_inside_the_process(tmp_path):
    code, said, _ = _run("namespaces", f"{sys.executable} -c 'bytearray(3 << 30)'; echo status=$?", tmp_path,
                         memory_bytes=1 << 30)
    assert "MemoryError" in said and "status=1" in said, said
    assert sandbox.limit_sentence(said) and "GiB of memory" in sandbox.limit_sentence(said)


@ROOT_ONLY
def test_user_level_hides_folders_deletes_leftovers_and_limits_processes(tmp_path):
    hidden = tmp_path / "class"
    hidden.mkdir()
    hidden.chmod(0o755)
    (hidden / "bob.py").write_text("classmate's work\n")
    (hidden / "bob.py").chmod(0o644)
    os.chmod(tmp_path, 0o755)  # reachable by others, as a class folder usually is
    marker = uuid.uuid4().hex[:8]
    script = (f"cat {hidden}/bob.py 2>/dev/null || echo class-hidden; "
              f"echo note > /dev/shm/grade-left-{marker} && echo shm-written; "
              f"echo note > /tmp/grade-left-{marker} && echo tmp-written; "
              f"i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done 2>&1 | head -1; echo forked")
    code, said, _ = _run("user", script, tmp_path, hide=[hidden], processes=40)
    assert "class-hidden" in said and "classmate" not in said, said
    assert "shm-written" in said and "tmp-written" in said, said
    assert not os.path.exists(f"/dev/shm/grade-left-{marker}") and not os.path.exists(f"/tmp/grade-left-{marker}")
    assert "Cannot fork" in said and "forked" in said, said  # the shell's words past RLIMIT_NPROC


@pytest.mark.skipif(os.geteuid() != 0 or not sandbox._nproc_per_namespace(),
                    reason="a per-namespace process count needs a root grader and Linux 5.14")
@pytest.mark.parametrize("level", ["namespaces", "user"])
def test_one_files_fork_loop_does_not_starve_a_grading_beside_it(level, tmp_path):
    """Both run as the sandbox user; each has a count of processes of its own (its own user namespace),
    so the second still starts its processes while the first holds every one its limit allows."""
    if level == "namespaces" and sandbox.available_level() != "namespaces":
        pytest.skip("no namespaces here")
    import threading

    greedy = "(i=0; while [ $i -lt 100 ]; do sleep 8 & i=$((i+1)); done) 2>&1 | head -1; echo greedy-held; sleep 6"
    beside = ("sleep 2; i=0; while [ $i -lt 10 ]; do sleep 1 & i=$((i+1)); done; wait; echo beside-forked; "
              "cat /proc/self/uid_map; id -u")
    results = {}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = threading.Thread(target=lambda: results.update(greedy=_run(level, greedy, tmp_path / "a", processes=40)))
    first.start()
    results["beside"] = _run(level, beside, tmp_path / "b", processes=40)
    first.join()
    _, greedy_said, _ = results["greedy"]
    _, beside_said, _ = results["beside"]
    assert "greedy-held" in greedy_said and "Cannot fork" in greedy_said, greedy_said  # it reached its limit
    assert "Cannot fork" not in beside_said and "beside-forked" in beside_said, beside_said
    uid = str(sandbox.sandbox_uid())
    assert beside_said.split()[-4:] == [uid, uid, "1", uid], beside_said  # its own user namespace, the same user


@pytest.mark.parametrize("level", _levels())
def test_a_setup_failure_travels_on_the_sandbox_channel_and_an_exit_status_is_only_a_status(level, tmp_path):
    code, said, _ = _run(level, "echo 'grader sandbox: mount failed' >&2; exit 96", tmp_path)
    assert code == 96 and "could not be set up" not in said  # the learner's own words and status, nothing more
    if level == "namespaces":
        code, said, _ = _run(level, "echo never", tmp_path, view="/nonexistent-view-folder")
        assert code == sandbox.EXIT_SETUP and "the sandbox (namespaces) could not be set up" in said, said
        assert "never" not in said


def test_only_the_courses_own_variants_see_the_solutions(tmp_path):
    from grader.catalogue import ROOT

    variant = ROOT / "grader" / "exercises" / "ex09_rmsnorm" / "natural" / "zeroed_partials.py"
    outside = tmp_path / "zeroed_partials.py"
    outside.write_text(variant.read_text())
    assert sandbox.course_variant(ROOT, variant)
    assert not sandbox.course_variant(ROOT, outside)
    hostile = next((ROOT / "grader" / "exercises").glob("*/hostile/*.py"))
    assert not sandbox.course_variant(ROOT, hostile)  # graded as a learner's file
    # A symbolic link into the course is judged by where it leads, not by where it sits.
    link = tmp_path / "link.py"
    link.symlink_to(variant)
    assert sandbox.course_variant(ROOT, link)
    solutions = str(ROOT / "solutions")
    assert solutions in sandbox.course_private_paths(ROOT)
    assert solutions not in sandbox.course_private_paths(ROOT, with_solutions=True)


@functools.lru_cache(maxsize=1)
def _python_for_the_sandbox_user() -> str | None:
    """A Python that uid 65534 may run, with this environment's packages: this one where it can, or else
    the system's Python of the same version in a throwaway environment (no pip) that reads this one's
    site-packages (a Python under root's home is closed to that user). None where neither is there."""
    import site

    def reachable(path):
        return os.path.exists(path) and not sandbox.can_judge_as(sandbox.DEFAULT_UID, read=[path], write=[],
                                                                 namespaces=False)

    packages = [p for p in site.getsitepackages() if os.path.isdir(p)]
    if not all(reachable(p) for p in packages):
        return None
    if reachable(os.path.realpath(sys.executable)):
        return sys.executable
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not reachable(system):
        return None
    folder = Path(tempfile.mkdtemp(prefix="grade-test-python-", dir="/tmp"))
    atexit.register(shutil.rmtree, folder, True)
    subprocess.run([system, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    purelib = subprocess.run([str(folder / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "course-packages.pth").write_text("\n".join(packages) + "\n")
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644 | (path.stat().st_mode & 0o111))
    return str(folder / "bin" / "python")


@NAMESPACES
@ROOT_ONLY
def test_a_root_judge_that_becomes_the_sandbox_user_grades_as_before_and_its_learner_is_that_user(tmp_path):
    """On a GPU as root the judge becomes the sandbox user before CUDA starts (`sandbox.judge_sandbox_plan`:
    the driver maps a judge's CUDA memory only into a process of its own user), with a /dev/shm of its own,
    and its learner's process runs in a user namespace as that user. The plan is forced here, in the
    interpreter, under a Python that user may run: a correct file still passes, the result says whose
    user the learner's process had, and nothing of it is left in the host's /dev/shm."""
    python = _python_for_the_sandbox_user()
    if python is None:
        pytest.skip("no Python here that uid 65534 may run with this environment's packages")
    script = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from grader import catalogue
from grader.commands import isolation
from grader.learner import sandbox
sandbox.judge_sandbox_plan = lambda gpu: {{"uid": sandbox.DEFAULT_UID, "private_shm": True}}
exercise = catalogue.get(1)
runs = {{}}
for name in ("solution", "fork_300", "read_root_only"):
    file = exercise.solution_path if name == "solution" else sys.argv[1] + "/" + name + ".py"
    run = isolation.run_checks(exercise, file, seed=5, interpreter=True, select="matches_reference and n1025")
    runs[name] = run.to_json()
print(json.dumps(runs))
"""
    # Two attacks, from a folder only root may read: the judge grades a copy it is given, as that user.
    hidden = tmp_path / "class"
    hidden.mkdir(mode=0o700)
    for name in ("fork_300", "read_root_only"):
        shutil.copy(Path(__file__).parent / "hostile" / "sandbox" / f"{name}.py", hidden / f"{name}.py")
    before = set(os.listdir("/dev/shm"))
    # Its gradings' folders belong to the sandbox user: outside /tmp, where a `user`-level test running
    # beside this one deletes whatever that user owns.
    folder = Path(tempfile.mkdtemp(prefix="grade-test-", dir="/var/tmp"))
    os.chmod(folder, 0o711)
    try:
        done = subprocess.run([python, "-c", script, str(hidden)], capture_output=True, text=True, timeout=400,
                              env={**os.environ, "TRITON_INTERPRET": "1", "TMPDIR": str(folder)})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = json.loads(done.stdout.splitlines()[-1])
    run = runs["solution"]
    failed = [c for c in run["checks"] if not c["passed"] and not c.get("skipped")]
    assert run["checks"] and not failed and not run.get("fatal"), [c["message"] for c in failed] or run.get("fatal")
    assert f"the sandbox user (uid {sandbox.DEFAULT_UID}), as its judge does" in run["sandbox"], run["sandbox"]
    said = json.dumps(runs["fork_300"])
    assert "processes (threads count too), the sandbox's limit" in said, said[-1500:]  # RLIMIT_NPROC in its namespace
    said = json.dumps(runs["read_root_only"])
    assert "ESCAPED" not in said and "root:" not in said, said[-1500:]
    assert f"as its judge does" in runs["read_root_only"]["sandbox"]  # the copy let the judge drop
    left = [n for n in set(os.listdir("/dev/shm")) - before if os.lstat(f"/dev/shm/{n}").st_uid == sandbox.DEFAULT_UID]
    assert not left, left


@ROOT_ONLY
def test_a_judge_stays_root_only_where_the_sandbox_user_cannot_reach_the_course(tmp_path, monkeypatch):
    """The sandbox user must read the course and its Python, and write the grading's folder: tried first in
    a forked child (`sandbox.can_judge_as`). A Python only root may run keeps the judge root and says
    why; a learner's file in a root-only folder does not (the judge is given a copy); a kernel cache that
    user cannot write is handed to it as a copy and kept afterwards, one it can write is used as it is."""
    from grader import catalogue
    from grader.commands import isolation

    python = _python_for_the_sandbox_user()
    if python is None:
        pytest.skip("no Python here that uid 65534 may run with this environment's packages")
    monkeypatch.setattr(sandbox, "judge_sandbox_plan", lambda gpu: {"uid": sandbox.DEFAULT_UID})
    exercise = catalogue.get(1)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "mine.py").write_text("x = 1\n")
    (private / "python").write_bytes(b"")
    folders = []

    def plan_for(learner_file, kernel_cache=None, env=None):
        folders.append(Path(tempfile.mkdtemp(prefix="grade-test-", dir="/tmp")))
        os.chmod(folders[-1], 0o711)
        return isolation.judge_plan(gpu=True, exercise=exercise, learner_file=learner_file, tmp_root=folders[-1],
                                    kernel_cache=kernel_cache, env={} if env is None else env)

    try:
        monkeypatch.setattr(sys, "executable", str(private / "python"))
        plan = plan_for(exercise.solution_path)
        assert "uid" not in plan and "cannot read" in plan["refused"] and "python" in plan["refused"], plan
        assert os.stat(folders[-1]).st_uid == 0  # handed back to the judge that stays root

        monkeypatch.setattr(sys, "executable", python)  # the judge's Python, as the grading would start it
        env: dict = {}
        kept = private / "cache" / "ex01-abc"
        (kept / "0a1b").mkdir(parents=True)
        (kept / "0a1b" / "add_kernel.cubin").write_bytes(b"compiled before")
        (kept / "0a1b" / "stolen").symlink_to("/etc/shadow")
        plan = plan_for(private / "mine.py", kernel_cache=kept, env=env)
        assert plan.get("uid") == sandbox.DEFAULT_UID and plan["kernel_cache_kept"] == str(kept), plan
        copy = Path(plan["kernel_cache"])  # root's cache is closed to that user: a copy it owns, in its home
        assert copy.is_relative_to(folders[-1]) and os.stat(copy).st_uid == sandbox.DEFAULT_UID
        assert (copy / "0a1b" / "add_kernel.cubin").read_bytes() == b"compiled before"
        assert os.stat(copy / "0a1b" / "add_kernel.cubin").st_uid == sandbox.DEFAULT_UID
        assert not os.path.lexists(copy / "0a1b" / "stolen")  # a link is not copied
        (copy / "0a1b" / "add_kernel.cubin").write_bytes(b"compiled now")  # what the learner's process wrote
        (copy / "ffee").mkdir()
        (copy / "ffee" / "other.json").write_text("{}")
        (copy / "ffee" / "passwd").symlink_to("/etc/passwd")
        (copy / "etc").symlink_to("/etc")  # a folder link: never entered, never made
        assert isolation.keep_kernel_cache(str(copy), str(kept)) == len(b"compiled now") + 2
        assert (kept / "0a1b" / "add_kernel.cubin").read_bytes() == b"compiled now"
        assert (kept / "ffee" / "other.json").read_text() == "{}" and not os.path.lexists(kept / "ffee" / "passwd")
        assert os.stat(kept / "ffee" / "other.json").st_uid == 0 and not os.path.lexists(kept / "etc")
        assert Path(plan["learner_file"]).read_text() == "x = 1\n" and plan["learner_file"].startswith(str(folders[-1]))
        assert os.stat(folders[-1]).st_uid == sandbox.DEFAULT_UID and env["HOME"].startswith(str(folders[-1]))
        assert env["GRADE_CACHE_DIR"].startswith(str(folders[-1]))  # the ceilings, in a copy it may write

        shared = Path(tempfile.mkdtemp(prefix="grade-test-cache-", dir="/tmp"))
        folders.append(shared)
        os.chmod(shared, 0o777)
        plan = plan_for(exercise.solution_path, kernel_cache=shared / "kernels" / "ex01-abc")
        assert plan.get("kernel_cache") == str(shared / "kernels" / "ex01-abc") and "learner_file" not in plan, plan
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def test_the_ceilings_a_sandboxed_judge_measured_are_kept_and_nothing_else(tmp_path, monkeypatch):
    """A judge that was the sandbox user measured into a copy of the ceiling cache: the grader keeps the
    entries shaped like a ceiling under their own key, and drops anything else the copy holds."""
    from grader.commands import isolation

    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path / "cache"))
    good = {"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "ceiling_gbps": 3031.0, "copy_gbps": 2950.5,
            "add_gbps": 3031.0, "buffer_bytes": 1 << 30, "measured_at": "2026-12-06", "torch": "2.11.0"}
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps({"NVIDIA H100 80GB HBM3 | driver 580.159.04": good,
                                "NVIDIA H200 | driver 1": {**good, "ceiling_gbps": 1.0},  # under another GPU's key
                                "x | driver y": {"gpu": "x"}}))
    assert isolation.keep_measured_ceilings(str(copy)) == 1
    kept = json.loads((tmp_path / "cache" / "ceilings.json").read_text())
    assert kept == {"NVIDIA H100 80GB HBM3 | driver 580.159.04": good}
    assert isolation.keep_measured_ceilings(str(copy)) == 0  # already known
    link = tmp_path / "link.json"
    link.symlink_to(copy)
    assert isolation.keep_measured_ceilings(str(link)) == 0  # a link is not followed


def test_no_judge_plan_without_a_gpu():
    """In the interpreter the judge needs no CUDA handles: it stays who it is (the learner's process drops)."""
    assert sandbox.judge_sandbox_plan(gpu=False) == {}


@NAMESPACES
@ROOT_ONLY
def test_an_ordinary_users_judge_still_gets_namespaces_after_making_itself_undumpable():
    """A learner's own machine grades as an ordinary user: the judge makes itself undumpable, and a fork of
    an undumpable process could not write its new user namespace's uid_map, so the probe used to fall to
    the ``partial`` level. Played as uid 65534 with the sandbox module alone (it needs only the standard
    library), under a Python any user may run."""
    import shutil

    python = next((p for p in ("/usr/bin/python3", sys.executable)
                   if os.path.exists(p) and os.stat(os.path.realpath(p)).st_mode & 0o005 == 0o005), None)
    if python is None:
        pytest.skip("no Python here that another user may run")
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="grade-sandbox-test-", dir="/tmp"))  # pytest's tmp_path is root's alone
    shutil.copy(ROOT / "grader" / "learner" / "sandbox.py", folder / "sandbox.py")
    os.chmod(folder, 0o755)
    os.chmod(folder / "sandbox.py", 0o644)
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import sandbox\n"
              "sandbox.make_undumpable()\n"
              "print(sandbox.available_level())\n")

    def become_nobody():
        os.setgroups([])
        os.setresgid(sandbox.DEFAULT_UID, sandbox.DEFAULT_UID, sandbox.DEFAULT_UID)
        os.setresuid(sandbox.DEFAULT_UID, sandbox.DEFAULT_UID, sandbox.DEFAULT_UID)

    done = subprocess.run([python, "-c", script, str(folder)], capture_output=True, text=True, timeout=60,
                          preexec_fn=become_nobody, env={"PATH": "/usr/bin:/bin", "GRADE_SANDBOX": "auto"})
    if done.returncode and "Permission denied" in done.stderr:
        pytest.skip(f"uid {sandbox.DEFAULT_UID} may not run {python} here")
    assert done.returncode == 0, done.stderr[-1500:]
    shutil.rmtree(folder, ignore_errors=True)
    assert done.stdout.strip() == "namespaces", done.stdout + done.stderr
