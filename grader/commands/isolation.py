"""Grade one learner file: a judge process, a sandboxed learner process, one wall clock.

`run_checks` is what ``grade exercise``, ``grade watch`` and ``grade batch`` call. It

1. reads the file's source (as Python decodes it) and runs the static honesty check
   (`grader.commands.source_allowlist`): in strict mode (class grading) a file with findings is refused with
   one failed check, otherwise the findings become a notice;
2. starts the judge (`grader.judge`), which runs the exercise's spec and starts the learner's own
   process in a sandbox (`grader.learner.sandbox`); the judge never imports the learner's file, and the
   learner's process cannot reach the judge's memory, its pipes or the events it sends here;
3. reads the judge's events (`grader.wire.results`) and enforces the whole-file clock: import, every
   check and exit included, ``file_timeout`` seconds at most. Past it, the judge and everything
   under it are ended and the unfinished checks say so.

A crash, hang or CUDA error of the learner's process costs the check it happened in (the judge
restarts that process); a check that runs past its own clock (``check_timeout``) is stopped by the
judge. Whatever happens, every process started here is gone and the temporary folder removed when
this returns, also after Ctrl-C, SIGTERM or SIGHUP (the CLI turns those into exceptions).
"""

from __future__ import annotations

import atexit
import json
import os
import select as _select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader import device, prestart
from grader.commands import source_allowlist
from grader.learner import sandbox
from grader.catalogue import ROOT, Exercise
from grader.wire.results import CheckRecord, Kind, RunResult, apply_event

#: Seconds a whole file may take (import, every check, exit).
FILE_TIMEOUT = 900.0
#: The longest event line the judge may send.
MAX_EVENT_BYTES = 8 << 20

_RUNNING: set[subprocess.Popen | prestart.Started] = set()  # judges started here and not yet ended (for stop_all)
_RUNNING_LOCK = threading.Lock()
#: What a judge, and a learner's process in the interpreter, import before they read anything of a
#: grading: their templates (`grader.prestart`) import it once for every grading this process starts
#: (2.3 s of CPU for a judge, 2.4 s for a learner's process, on a laptop core), with every module such a
#: process of exercise 1 imported after its fork, and Triton's compiler front end, which a fix reads
#: (with the judge's pytest spared its gc: 0.57 -> 0.24 s for exercise 1's first check in a process that
#: graded before, ``first_check_warm`` of phases 12-07-before and 12-07-after in
#: docs/measurements/cpu-grading-speed.json). Not the interpreter's fixes: the learner's process installs
#: them (they read its environment); the template only hashes the sources they check
#: (``module:function`` calls a function of the module once it is imported).
TEMPLATE_IMPORTS = {
    "judge": ("torch", "pytest", "grader.judge.plugin", "grader.judge.learner_process", "grader.judge.checks",
              "grader.judge.traffic_rules", "grader.learner.access_map", "grader.plan"),
    "learner": ("torch", "triton", "triton.language", "grader.learner.sandbox", "grader.learner.runner", "grader.learner.call_watch",
                "grader.learner.traffic", "grader.wire.failures", "grader.wire.guards", "grader.wire.arena",
                "grader.learner.mode", "triton.compiler.code_generator",
                "grader.learner.interpreter_fixes:fingerprint_sources"),
}
_TEMPLATES: dict[str, prestart.Template] = {}  # by role, each started by the first grading that needs it
_TEMPLATE_HOMES: dict[str, str] = {}  # the folder each runs in (the learner's: its HOME and caches)
_JUDGES_STARTED = [0]  # by this process: templates serve the second grading and later ones
_STOPS = [0]  # how many times stop_all ran: a judge whose start overlapped one is ended at once
#: The environment the judge template imports with (and variables starting with LC_): torch's OpenMP
#: reads its thread count when torch is imported.
TEMPLATE_ENVIRONMENT = frozenset({"PATH", "PYTHONPATH", "HOME", "TMPDIR", "LANG", "LD_LIBRARY_PATH", "VIRTUAL_ENV",
                                  "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE"})


def stop_all() -> None:
    """End every judge this process started that is still running (Ctrl-C in ``grade batch``), and any
    whose start is under way (a template may take seconds to answer while it imports torch)."""
    with _RUNNING_LOCK:
        _STOPS[0] += 1
        running = list(_RUNNING)
    for proc in running:
        _end(proc, grace=0)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def run_checks(exercise: Exercise, learner_file: str | Path, *, seed: int, interpreter: bool = False,
               check_timeout: float | None = None, select: str | None = None, strict: bool = False,
               hide: tuple[str, ...] | list[str] = (), file_timeout: float | None = None,
               display: str | None = None, kernel_cache: str | Path | None = None) -> RunResult:
    """Run ``exercise``'s spec against ``learner_file`` and collect one record per check. ``kernel_cache``
    (`kernel_cache_for`): on a GPU, the Triton cache the learner's process keeps for the next grading of
    the same file; never in strict mode (a class's gradings start with none)."""
    path = Path(learner_file).resolve()
    display = display or _shown(Path(learner_file))
    result = RunResult(exercise=exercise.number, learner_file=str(path), seed=seed)
    started = time.monotonic()
    clock = file_timeout or FILE_TIMEOUT

    try:
        source = source_allowlist.read_source(path)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        result.fatal = f"{display} cannot be read as Python source: {exc}"
        return result
    found = source_allowlist.findings(source, display)
    if found and not strict and not _parses(source):
        found = []  # the import check says so first, with the line: a notice would say it twice
    if found:
        if strict:
            result.checks = [CheckRecord("static_check", "honesty", False, message=source_allowlist.sentence(found, strict=True),
                                         kind=Kind.REJECTED)]
            result.wall_seconds = time.monotonic() - started
            return result
        result.notices.append(source_allowlist.sentence(found, strict=False))

    collected: dict[str, str] = {}
    done: dict[str, CheckRecord] = {}
    running: list[str] = []
    tmp_root = Path(tempfile.mkdtemp(prefix="grade-"))
    os.chmod(tmp_root, 0o711)  # the sandbox user passes through to its own scratch folder, lists nothing
    read_fd, write_fd = os.pipe()
    command = [str(exercise.spec_file), f"--grade-seed={seed}", f"--grade-events-fd={write_fd}"]
    if interpreter:
        command.append("--interpreter")
    if check_timeout:
        command.append(f"--check-timeout={check_timeout}")
    if select:
        command += ["-k", select]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # other plugins cost seconds and can import Triton early
    judge_log = tmp_root / "judge.txt"
    stops = _STOPS[0]
    proc = None
    timed_out = False
    judge_in_interpreter = interpreter or device.interpreter_requested() or not device.driver_present()
    kernel_cache = kernel_cache if not strict else None
    plan = judge_plan(gpu=not judge_in_interpreter, exercise=exercise, learner_file=path, tmp_root=tmp_root,
                      kernel_cache=kernel_cache, env=env)
    if plan.get("uid") is not None:  # a judge that becomes the sandbox user: what that user may reach
        kernel_cache = plan.get("kernel_cache")
    # What names the learner's file and the folders hidden from it travels in the judge's environment:
    # any process may read a command line in /proc, only the same user another process's environment.
    # Each option is one `--name=value` word, so a file named `-k.py` is a value, not an option.
    private = [f"--learner-file={plan.get('learner_file', path)}", f"--display={display}", f"--tmp-root={tmp_root}",
               *(f"--hide={folder}" for folder in hide), *([f"--kernel-cache={kernel_cache}"] if kernel_cache else [])]
    env["PYTEST_ADDOPTS"] = " ".join(shlex.quote(option) for option in private)
    try:
        # 0600: the learner's process knows this folder (its scratch folder is inside) and may be another user.
        with open(os.open(judge_log, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as log:
            proc = _start_judge(command, env=env, log=log.fileno(), events_fd=write_fd,
                                interpreter=judge_in_interpreter, plan=plan)
        with _RUNNING_LOCK:
            _RUNNING.add(proc)
            stopped = _STOPS[0] != stops
        if stopped:  # stop_all ran while this judge was starting: it would have missed it
            _end(proc, grace=0)
        os.close(write_fd)
        write_fd = -1
        pending = b""
        while True:
            left = clock - (time.monotonic() - started)
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = _select.select([read_fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if len(pending) > MAX_EVENT_BYTES:
                pending = b""
            for line in lines:
                try:
                    data = json.loads(line)
                except ValueError:
                    continue
                if isinstance(data, dict):
                    try:
                        apply_event(result, data, collected, done, running)
                    except (KeyError, TypeError, ValueError):
                        continue
    finally:
        if write_fd >= 0:
            os.close(write_fd)
        os.close(read_fd)
        if proc is not None:
            _end(proc)
            with _RUNNING_LOCK:
                _RUNNING.discard(proc)
        judge_tail = _tail(judge_log)
        if plan.get("ceilings"):
            keep_measured_ceilings(plan["ceilings"])
        if plan.get("kernel_cache_kept"):
            keep_kernel_cache(plan["kernel_cache"], plan["kernel_cache_kept"])
        shutil.rmtree(tmp_root, ignore_errors=True)

    returncode = proc.returncode if proc is not None else None
    if timed_out:
        message = (f"not run: the whole file ran past its {clock:.0f} s clock (import, every check and exit "
                   "together), so the grader stopped it")
        if running and running[0] not in done:
            done[running[0]] = CheckRecord(running[0], collected.get(running[0], running[0]), False,
                                           message=f"the whole file ran past its {clock:.0f} s clock during this "
                                                   "check: does a loop in your kernel or launcher never end?",
                                           kind=Kind.TIMEOUT)
        result.stopped = result.stopped or message
        if not collected and not done:
            result.fatal = (f"your file did not finish importing within the whole-file clock of {clock:.0f} s: does it "
                            "run a loop at import time (outside any function)?")
    elif running and running[0] not in done:
        done[running[0]] = CheckRecord(running[0], collected.get(running[0], running[0]), False,
                                       message=f"the grader stopped during this check (exit status {returncode}): "
                                               + judge_tail.strip()[-800:], kind=Kind.CRASH)
    if not timed_out and not collected and not done and result.fatal is None:
        result.fatal = ("the checks could not start" + (f" (exit status {returncode})" if returncode else "") + ":\n"
                        + judge_tail.strip()[-1500:])

    for nodeid, name in collected.items():
        if nodeid in done:
            result.checks.append(done[nodeid])
        else:
            result.checks.append(CheckRecord(nodeid, name, False, skipped=True, message=result.stopped or "not run",
                                             kind=Kind.NOT_RUN))
    for nodeid, check in done.items():  # an import failure reports before collection
        if nodeid not in collected:
            result.checks.append(check)
    result.wall_seconds = time.monotonic() - started
    return result


def count_traffic(run: RunResult, exercise: Exercise, learner_file: str | Path, **options) -> RunResult:
    """A GPU run with its traffic checks made real: bytes are counted by Triton's interpreter, so those
    checks run again there (``options`` as `run_checks` takes them) and replace the GPU run's, which skip.
    On a GPU the L2 serves a second read of an input (exercise 1's ``reads_x_twice`` reached 97% and 98% of
    the H200's ceiling, docs/measurements/h200-class-rank-noise.json), so without this a kernel that reads
    its input twice passes there. Any other run is
    returned as it is. A ``select`` in ``options`` narrows the traffic checks as it narrowed the GPU run's."""
    if run.mode != "gpu" or exercise.expected_traffic is None:
        return run
    select = options.get("select")
    options = {k: v for k, v in options.items() if k not in ("interpreter", "select")}
    counted = run_checks(exercise, learner_file, interpreter=True,
                         select=f"traffic and ({select})" if select else "traffic", **options)
    replacements = {c.name: c for c in counted.checks if c.name.startswith("traffic")}
    if not replacements:  # the selection left no traffic check
        return run
    run.checks = [replacements.pop(c.name, c) for c in run.checks] + list(replacements.values())
    run.wall_seconds += counted.wall_seconds
    return run


def kernel_cache_for(exercise: Exercise, learner_file: str | Path) -> Path:
    """Where the learner's own gradings of ``learner_file`` keep its Triton cache on a GPU, beside the
    measured ceilings (``$GRADE_CACHE_DIR`` or the user cache folder): without it every grading compiles
    the kernels its checks need again. One folder per file, written only by that file's own process;
    `grade batch` and ``--strict`` use none."""
    import hashlib

    base = os.environ.get("GRADE_CACHE_DIR")
    if not base:
        import platformdirs

        base = platformdirs.user_cache_dir("triton-memory-course")
    name = hashlib.sha256(str(Path(learner_file).resolve()).encode()).hexdigest()[:16]
    return Path(base) / "kernels" / f"ex{exercise.number:02d}-{name}"


def judge_plan(*, gpu: bool, exercise: Exercise, learner_file: Path, tmp_root: Path, kernel_cache, env: dict) -> dict:
    """How this grading's judge starts (`grader.learner.sandbox.judge_sandbox_plan`): on a GPU as root, as
    the sandbox user with a /dev/shm of its own, so that the learner's process is unprivileged too. The
    sandbox user must reach the course, its Python and the learner's file (tried first,
    `sandbox.can_judge_as`); where it cannot, the judge stays root and ``refused`` says why. Prepares
    what that user writes: ``tmp_root``, a home in it (``HOME`` and ``TMPDIR`` in ``env``), and the
    kernel cache (``kernel_cache`` in the plan: the file's own folder where that user may write it,
    else a copy in the home that `keep_kernel_cache` keeps, ``kernel_cache_kept`` naming the folder)."""
    plan = sandbox.judge_sandbox_plan(gpu=gpu)
    uid = plan.get("uid")
    if uid is None:
        return plan
    import importlib.util

    runtime = [os.path.dirname(os.path.realpath(spec.origin)) for name in ("torch", "triton", "pytest")
               if (spec := importlib.util.find_spec(name)) is not None and spec.origin]
    read = [os.path.realpath(sys.executable), str(ROOT / "grader"), str(exercise.spec_file), str(learner_file), *runtime]
    cache_parent = None
    if kernel_cache:
        cache_parent = Path(kernel_cache)  # the folder itself, or where the judge would make it
        while not cache_parent.exists() and cache_parent != cache_parent.parent:
            cache_parent = cache_parent.parent
    os.chown(tmp_root, uid, uid)
    if sandbox.can_judge_as(uid, read=[str(learner_file)], write=[], namespaces=False):
        # The learner's file sits where that user cannot read it (a folder of root's): the judge gets a copy.
        folder = tmp_root / "submission"
        folder.mkdir(mode=0o755)
        copy = folder / learner_file.name
        shutil.copyfile(learner_file, copy)
        os.chmod(copy, 0o644)
        plan["learner_file"] = str(copy)
        read[read.index(str(learner_file))] = str(copy)
    refused = sandbox.can_judge_as(uid, read=read, write=[str(tmp_root)])
    if refused:
        os.chown(tmp_root, os.geteuid(), os.getegid())
        del plan["uid"]
        plan["refused"] = refused
        return plan
    home = tmp_root / "judge-home"
    home.mkdir(mode=0o700)
    os.chown(home, uid, uid)
    env.update(HOME=str(home), TMPDIR=str(home))
    # The measured ceilings: the judge reads and writes a copy in its home (root's cache folder is closed to
    # it), and this process keeps what it measured (`keep_measured_ceilings`).
    ceilings = _ceiling_cache_path()
    judge_cache = home / "cache"
    judge_cache.mkdir(mode=0o700)
    if ceilings.is_file():
        shutil.copyfile(ceilings, judge_cache / "ceilings.json")
    for path in [judge_cache, *judge_cache.iterdir()]:
        os.chown(path, uid, uid)
    env["GRADE_CACHE_DIR"] = str(judge_cache)
    plan["ceilings"] = str(judge_cache / "ceilings.json")
    if cache_parent is not None:
        if not sandbox.can_judge_as(uid, read=[], write=[str(cache_parent)], namespaces=False):
            plan["kernel_cache"] = str(kernel_cache)
        else:
            # Root's cache folder is closed to that user: the learner's process compiles into a copy in the
            # judge's home, kept afterwards (`keep_kernel_cache`). Without it every grading compiled its
            # kernels again.
            copy = home / "kernels"
            _copy_regular_files(Path(kernel_cache), copy, owner=uid)
            plan["kernel_cache"] = str(copy)
            plan["kernel_cache_kept"] = str(kernel_cache)
    return plan


#: The most a kept kernel cache may hold: exercise 1's is about 0.3 MB, the largest exercise's a few.
KERNEL_CACHE_BYTES = 64 << 20


def _copy_regular_files(source: Path, target: Path, *, owner: int | None = None,
                        limit: int = KERNEL_CACHE_BYTES) -> int:
    """Copy the folders and regular files under ``source`` into ``target`` (made if missing), never
    following a link and skipping anything else, up to ``limit`` bytes; with ``owner``, that user owns
    what is made. Returns the bytes copied."""
    copied = 0
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    if owner is not None:
        os.chown(target, owner, owner)
    if not source.is_dir() or source.is_symlink():
        return 0
    # os.fwalk opens each folder by descriptor without following links: a folder swapped for a link while
    # it runs is not entered (the copy is the sandbox user's).
    for folder, dirs, files, folder_fd in os.fwalk(source, follow_symlinks=False):
        here = target / Path(folder).relative_to(source)
        for name in dirs:
            try:
                if not stat.S_ISDIR(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode):
                    continue  # a link to a folder (listed, never entered)
            except OSError:
                continue
            (here / name).mkdir(mode=0o700, exist_ok=True)
            if owner is not None:
                os.chown(here / name, owner, owner)
        for name in files:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
            except OSError:
                continue  # a link, or gone
            with os.fdopen(fd, "rb") as file:
                info = os.fstat(file.fileno())
                if not stat.S_ISREG(info.st_mode) or copied + info.st_size > limit:
                    continue
                data = file.read(info.st_size)
            out = os.open(here / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(out, "wb") as file:
                file.write(data)
            if owner is not None:
                os.chown(here / name, owner, owner)
            copied += len(data)
    return copied


def keep_kernel_cache(copy: str, kept: str) -> int:
    """After a judge that was the sandbox user: the Triton cache its learner's process wrote in the copy
    (`judge_plan`) replaces the file's own cache folder, regular files only; the bytes kept."""
    target = Path(kept)
    fresh = target.with_name(f".{target.name}.{os.getpid()}.new")
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        copied = _copy_regular_files(Path(copy), fresh)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(fresh, target)
    except OSError:
        shutil.rmtree(fresh, ignore_errors=True)
        return 0
    return copied


def _ceiling_cache_path() -> Path:
    """`grader.bandwidth.cache_path`, without importing torch (as the bandwidth module does)."""
    override = os.environ.get("GRADE_CACHE_DIR")
    if override:
        return Path(override) / "ceilings.json"
    import platformdirs

    return Path(platformdirs.user_cache_dir("triton-memory-course")) / "ceilings.json"


def keep_measured_ceilings(copy: str) -> int:
    """After a judge that was the sandbox user: the ceilings it measured, from its copy of the cache, kept
    in this process's cache (each entry checked for the fields a ceiling has); how many were new."""
    try:
        fd = os.open(copy, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as file:
            measured = json.loads(file.read(1 << 20))
    except (OSError, ValueError):
        return 0
    target = _ceiling_cache_path()
    try:
        known = json.loads(target.read_text())
    except (OSError, ValueError):
        known = {}
    known = known if isinstance(known, dict) else {}
    fields = {"gpu": str, "driver": str, "ceiling_gbps": float, "copy_gbps": float, "add_gbps": float,
              "buffer_bytes": int, "measured_at": str, "torch": str}
    new = {}
    for key, entry in (measured.items() if isinstance(measured, dict) else ()):
        if (isinstance(entry, dict) and set(entry) == set(fields) and known.get(key) != entry
                and all(isinstance(entry[f], (int, float) if kind is float else kind) for f, kind in fields.items())
                and key == f"{entry['gpu']} | driver {entry['driver']}"):
            new[key] = entry
    if new:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**known, **new}, indent=1))
        os.replace(tmp, target)
    return len(new)


def _start_judge(arguments: list[str], *, env: dict[str, str], log: int, events_fd: int, interpreter: bool,
                 plan: dict | None = None) -> subprocess.Popen | prestart.Started:
    """The judge (`grader.judge` with ``arguments``), in a session of its own, its output to ``log``,
    dying with this process: in the interpreter, forked from the judge template and given the learner's
    template, which its sandbox forks the learner's processes from (`grader.learner.sandbox.start`); otherwise
    started from scratch. A process's first grading starts its processes from scratch: a template's
    imports cost what they save once, so they only pay in a process that grades again. On a GPU the
    templates are not used yet: nothing has measured a forked judge's CUDA timing there
    (``GRADE_PRESTART=gpu`` forks the judge there too, for `tools/device/grading_speed.sh`)."""
    with _RUNNING_LOCK:
        _JUDGES_STARTED[0] += 1
        again = _JUDGES_STARTED[0] > 1
    forked_on_gpu = os.environ.get("GRADE_PRESTART") == "gpu"  # to measure a forked judge on a GPU
    plan = {k: v for k, v in (plan or {}).items() if k in ("uid", "private_shm")}
    if again and (interpreter or forked_on_gpu) and prestart.enabled() and not plan:  # a template is root's
        judges = _template("judge", env)
        fds = {1: log, 2: log, events_fd: events_fd}
        if interpreter:
            learners = _template("learner", env)
            fds[learners.fileno] = learners.fileno
            env = {**env, sandbox.TEMPLATE_FD_VARIABLE: str(learners.fileno)}
        try:
            return judges.start("grader.judge.__main__:main", arguments, env=env, cwd=os.getcwd(), fds=fds)
        except OSError:
            env.pop(sandbox.TEMPLATE_FD_VARIABLE, None)  # the template is gone: this judge starts from scratch
    if plan:
        try:
            shared = {sandbox.JUDGE_SHM_VARIABLE: "private"} if plan.get("private_shm") else {}
            return subprocess.Popen([sys.executable, "-s", "-m", "grader.judge", *arguments], cwd=os.getcwd(),
                                    env={**env, **shared}, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                    pass_fds=(events_fd,), start_new_session=True,
                                    preexec_fn=lambda: (sandbox.enter_judge_sandbox(plan), _judge_preexec()))
        except subprocess.SubprocessError:
            pass  # a step of the plan failed in the child (it said nothing yet): the judge starts as before
    return subprocess.Popen([sys.executable, "-s", "-m", "grader.judge", *arguments], cwd=os.getcwd(), env=env,
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL, pass_fds=(events_fd,),
                            start_new_session=True, preexec_fn=_judge_preexec)


def _template(role: str, env: dict[str, str]) -> prestart.Template:
    """The template of ``role`` ("judge" or "learner"), started by the first grading that needs it."""
    with _RUNNING_LOCK:
        if role not in _TEMPLATES or not _TEMPLATES[role].alive():
            if not _TEMPLATES:
                atexit.register(close_templates)
            folder = _TEMPLATE_HOMES.setdefault(role, tempfile.mkdtemp(prefix=f"grade-{role}-template-"))
            if role == "judge":
                # What the imports read, and nothing of a grading: each judge gets its run's environment when it
                # starts (Linux's /proc shows the template's to other processes, which find no grading's in it).
                quiet = {k: v for k, v in env.items() if k in TEMPLATE_ENVIRONMENT or k.startswith("LC_")}
            else:
                # The learner's environment (allow-listed), without what a grading adds to it for its own processes.
                os.chmod(folder, 0o711)
                quiet = sandbox.learner_environment({k: v for k, v in env.items() if k != sandbox.PASS_VARIABLE},
                                                    scratch=folder, course=ROOT, interpreter=True)
            _TEMPLATES[role] = prestart.Template(list(TEMPLATE_IMPORTS[role]), env=quiet, cwd=folder,
                                                 preexec_fn=_template_preexec)
        return _TEMPLATES[role]


def close_templates() -> None:
    """End the templates once what they started has ended (at exit; a measurement's end)."""
    with _RUNNING_LOCK:
        templates = list(_TEMPLATES.values())
        _TEMPLATES.clear()
        homes = list(_TEMPLATE_HOMES.values())
        _TEMPLATE_HOMES.clear()
    for template in templates:
        template.close()
    for folder in homes:
        shutil.rmtree(folder, ignore_errors=True)


def _template_preexec() -> None:
    """In a template, before it starts: it dies with this process (SIGKILL: it runs nothing of its own)."""
    import ctypes

    sandbox._libc.prctl(ctypes.c_int(sandbox.PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL),
                        ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def _parses(source: str) -> bool:
    import ast

    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _judge_preexec() -> None:
    """In the judge's process, before it starts: it dies (SIGTERM, so it can end what it started)
    when this process dies, however that happens."""
    import ctypes

    sandbox._libc.prctl(ctypes.c_int(sandbox.PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGTERM),
                        ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def _end(proc: subprocess.Popen | prestart.Started, grace: float = 5.0) -> None:
    """The judge and its process group, gone: a moment to finish, then SIGTERM, then SIGKILL."""
    try:
        if proc.poll() is None and grace:
            proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def _tail(path: Path, size: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode(errors="replace")
    except OSError:
        return ""
