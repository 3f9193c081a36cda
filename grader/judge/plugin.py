"""The pytest plugin of the judge: one exercise's spec against one learner file.

The judge is the process that decides verdicts, and it never imports learner code. This plugin
starts the learner's own process (`grader.judge.learner_process`, in the sandbox of `grader.learner.sandbox`) as
soon as pytest is configured, so the learner's file is imported while the specs are collected,
and gives the specs these fixtures:

``learner``
    the learner's file as a `grader.judge.learner_process.LearnerModule` (its functions run in the
    learner's process); a file that fails to import fails the first check that asks for it and
    stops the run (every other check would say the same).
``exercise``
    the exercise whose folder holds the spec (`grader.catalogue.Exercise`, read from the folder's
    manifest: its function, floor, number, constants...): a spec restates nothing the manifest says.
``learner_function``
    the exercise's function (the manifest's ``function``) from the learner's file.
``check``
    the `grader.wire.results.CheckRecord` of the running check: specs put a performance record or
    extra records for the report there.
``rng``, ``device``, ``mode``
    a generator seeded from the run's seed and the check's id (``--seed`` replays every input),
    ``"cuda"`` or ``"cpu"``, ``"gpu"`` or ``"interpreter"``.

Options: ``--learner-file PATH`` (required), ``--display NAME`` (the path the learner knows),
``--grade-seed N``, ``--grade-events-fd FD`` (events for `grade`, `grader.wire.results`),
``--check-timeout S``, ``--interpreter``, ``--hide DIR`` (repeatable: folders the learner's
process must not see), ``--tmp-root DIR``.
"""

from __future__ import annotations

import os
import sys
import time
import zlib
from pathlib import Path

import pytest

from grader.learner import sandbox
from grader.catalogue import Exercise
from grader.wire.failures import GradeFailure, first_line
from grader.wire.results import STOPPING, CheckRecord, Kind, event

#: Seconds one check may take. The interpreter runs ~1 ms of Python per program instance.
CHECK_TIMEOUT = {"interpreter": 120.0, "gpu": 60.0}
#: Seconds a ``performance`` check may take on a GPU, unless ``--check-timeout`` says otherwise: it compiles
#: the kernel at the benchmark size and times it in turns with a peer. Exercise 7's took about a minute
#: on an H200 with an empty Triton cache (two compilations, four timings of the kernel and four of SDPA):
#: under the correctness checks' 60 s clock the course's own solution sometimes failed.
PERFORMANCE_TIMEOUT = 300.0
#: A hung check costs its whole clock, and the checks after it call the same function on inputs made
#: the same way: after the first one, the rest are not run (each would wait out the same clock).
MAX_CONSECUTIVE_TIMEOUTS = 1


def pytest_addoption(parser):
    group = parser.getgroup("grade")
    group.addoption("--learner-file", default=None, help="the file implementing the exercise")
    group.addoption("--display", default=None, help="how the learner names that file")
    group.addoption("--grade-seed", type=int, default=None, help="seed for random inputs")
    group.addoption("--grade-events-fd", type=int, default=None, help="file descriptor for the grade command's events")
    group.addoption("--check-timeout", type=float, default=None, help="seconds one check may take")
    group.addoption("--interpreter", action="store_true", default=False, help="run the learner's code in Triton's interpreter")
    group.addoption("--hide", action="append", default=[], help="a folder the learner's process must not see")
    group.addoption("--tmp-root", default=None, help="where the learner's process gets its scratch folder")
    group.addoption("--kernel-cache", default=None,
                    help="a Triton cache the learner's process keeps between gradings of one learner's file (GPU)")


class _Events:
    def __init__(self, fd: int | None):
        self.fd = fd

    def write(self, kind: str, **fields) -> None:
        if self.fd is None:
            return
        data = event(kind, **fields)
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


class Session:
    """What the plugin holds for one run (created in pytest_configure)."""

    def __init__(self, config):
        self.config = config
        self.events = _Events(config.getoption("--grade-events-fd"))
        self.mode = "interpreter"
        self.process = None
        self.record: CheckRecord | None = None
        self.timeout = 120.0
        self.timeout_given = False
        self.consecutive_timeouts = 0
        self.collected: dict[str, str] = {}
        #: Why the run stops before its last check (checks that hung in a row), once it must.
        self.stop_reason: str | None = None
        self.started = time.monotonic()  # the judge's configure: what the "timings" event counts from


#: The run's Session, made by pytest_configure. Module-level because pytest calls the report hooks
#: (`pytest_runtest_logstart`, `pytest_runtest_logreport`) with nothing that leads to the config.
_SESSION: Session | None = None


def check_clock(session, nodeid: str) -> float:
    """Seconds the check may take: the session's clock, longer for a GPU performance check unless the
    clock was given on the command line."""
    if session.mode == "gpu" and not session.timeout_given and check_name(nodeid).startswith("performance"):
        return max(session.timeout, PERFORMANCE_TIMEOUT)
    return session.timeout


def check_name(nodeid: str) -> str:
    """'grader/exercises/ex01_vector_add/spec.py::test_matches[fp16-1025]' -> 'matches[fp16-1025]'."""
    name = nodeid.split("::")[-1]
    return name[5:] if name.startswith("test_") else name


def _seed(config) -> int:
    seed = config.getoption("--grade-seed")
    if seed is None:
        seed = int(os.environ.get("GRADE_SEED", "0")) or int.from_bytes(os.urandom(3), "big")
        config.option.grade_seed = seed
    return seed


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def pytest_configure(config):
    global _SESSION
    path = config.getoption("--learner-file")
    if path is None:
        return
    from grader.learner import mode
    from grader.judge.learner_process import LearnerProcess

    session = Session(config)
    _SESSION = session
    sandbox.make_undumpable()  # the learner's process cannot read this one's memory or pipes
    sandbox.become_subreaper()  # what it leaves behind comes back here to be killed
    from grader import device

    forced = bool(config.getoption("--interpreter"))
    # Where a driver is installed the run is most likely a GPU run: the learner's process (and the twin
    # of the GPU timing) start on that guess now, and import torch, Triton and the learner's file while
    # this process imports torch and asks the card (one after the other before).
    # A guess proved wrong (a CPU build of torch beside a driver) restarts the learner's process.
    guess_gpu = not forced and not device.interpreter_requested() and device.driver_present()
    session.timeout = config.getoption("--check-timeout") or CHECK_TIMEOUT["gpu" if guess_gpu else "interpreter"]
    session.timeout_given = bool(config.getoption("--check-timeout"))
    seed = _seed(config)
    display = config.getoption("--display") or path
    tmp_root = config.getoption("--tmp-root")
    if tmp_root:
        os.environ["TMPDIR"] = tmp_root  # the learner process's scratch folder goes there (tempfile reads it)
        import tempfile

        tempfile.tempdir = tmp_root
    import_timeout = min(session.timeout, 60.0) if config.getoption("--check-timeout") else 60.0

    def start(mode: str) -> None:
        process = LearnerProcess(path, display=display, mode=mode, hide=tuple(config.getoption("--hide") or ()),
                                 import_timeout=import_timeout, kernel_cache=config.getoption("--kernel-cache"))
        session.process = process
        process.start()  # the learner's file is imported while pytest collects the checks
        if mode == "gpu":
            # The twin of the GPU timing (grader.learner.clock_twin): the course's own process, started now so
            # that it is ready when a performance check needs it.
            process.twin = LearnerProcess.clock_twin()
            process.twin.start()

    start("gpu" if guess_gpu else "interpreter")
    gpu = device.current(force_interpreter=forced).gpu
    session.mode = "gpu" if gpu else "interpreter"
    if gpu != guess_gpu:
        for process in (getattr(session.process, "twin", None), session.process):
            if process is not None:
                process.close()
        session.timeout = config.getoption("--check-timeout") or CHECK_TIMEOUT[session.mode]
        start(session.mode)
    process = session.process
    import torch

    if session.mode == "interpreter":
        torch.set_num_threads(1)  # it takes turns with the learner's process: see grader.learner.runner.main

    session.events.write("mode", mode=session.mode, device="cuda" if gpu else "cpu", seed=seed,
                         versions={"triton": _version("triton"), "torch": torch.__version__,
                                   "python": sys.version.split()[0]},
                         sandbox=sandbox.describe(process.level, gpu=session.mode == "gpu"))


def pytest_unconfigure(config):
    session = _SESSION
    if session is not None and session.process is not None:
        twin = getattr(session.process, "twin", None)
        asked = time.monotonic()
        for process in (twin, session.process):  # both end at once, then each is waited for
            if process is not None:
                process.ask_to_exit()
        timings = {"learner": _start_timings(session.process, session.started),
                   "twin": _start_timings(twin, session.started) if twin is not None else None}
        if twin is not None:
            twin.close()
        timings["twin_ended_s"] = round(time.monotonic() - asked, 3) if twin is not None else None
        session.process.close()
        sandbox.kill_children()
        timings["learner_ended_s"] = round(time.monotonic() - asked, 3)
        # Where the grading's seconds went at its start and its end (tools/device/startup_probe.py prints it).
        session.events.write("timings", **timings)


def _start_timings(process, since: float) -> dict:
    """When ``process`` was started and when the judge had its hello (it reads the hello when it first needs the
    process), in seconds from the judge's configure; the stages of its start as it reported them (seconds from
    its runner's start)."""
    def offset(t):
        return None if t is None else round(t - since, 3)

    hello = process.hello or {}
    return {"started": offset(process.started_at), "ready": offset(process.ready_at),
            "stages": reported_steps(hello.get("stages"))}


def reported_steps(said) -> dict | None:
    """What the learner's process said of its steps, as the ``timings`` event carries it: at most 12 names of 40
    characters, each with a number or 60 characters of text; anything else (it wrote the hello) is left out."""
    if not isinstance(said, dict) or len(said) > 12:
        return None
    return {str(k)[:40]: v if isinstance(v, (int, float)) else str(v)[:60] for k, v in said.items()}


def _grades_bf16(item) -> bool:
    """Does the test run the learner's kernel in bfloat16: torch.bfloat16 among its parameters (directly or
    inside a tuple), or a check named ``test_bf16``? (A byte-model check parametrized by dtype runs no kernel.)"""
    import torch

    def holds(value) -> bool:
        if value is torch.bfloat16:
            return True
        return isinstance(value, (tuple, list)) and any(holds(v) for v in value)

    if "learner_function" not in getattr(item, "fixturenames", ()):
        return False
    if getattr(item, "originalname", "") == "test_bf16":
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and any(holds(v) for v in callspec.params.values())


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected theirs
def pytest_collection_modifyitems(session, config, items):
    if _SESSION is None:
        return
    if _SESSION.mode == "gpu":
        from grader import device, plan

        card = device.current()
        if "bf16" not in card.native_dtypes:  # a T4 (sm_75): skipped with a sentence, never failed
            for item in items:
                if _grades_bf16(item):
                    item.add_marker(pytest.mark.skip(reason=plan.no_native("bf16", card)))
    if _SESSION.mode == "interpreter" and _SESSION.process is not None:
        from grader.learner import interpreter_fixes

        try:
            fixes = _SESSION.process.ready().get("fixes") or {}
        except GradeFailure:
            fixes = None  # the file does not import: its first check says so
        if fixes is not None:
            _SESSION.events.write("fixes", interpreter_fixes=fixes)
            if not fixes.get("bf16"):
                # The learner process's interpreter is not one the bf16 fix knows: its bf16 results mean nothing.
                for item in items:
                    if _grades_bf16(item):
                        item.add_marker(pytest.mark.skip(reason=interpreter_fixes.BF16_ON_GPU_ONLY))
    _SESSION.events.write("collected", checks=[{"nodeid": i.nodeid, "name": check_name(i.nodeid)} for i in items])


def _session() -> Session:
    if _SESSION is None or _SESSION.process is None:
        pytest.fail("no --learner-file given: run through `grade exercise N`, or pass --learner-file")
    return _SESSION


@pytest.fixture(scope="session")
def learner():
    from grader.judge.learner_process import LearnerModule

    session = _session()
    session.process.ready()  # GradeFailure (import, not_implemented) when the file cannot be used
    return LearnerModule(session.process)


@pytest.fixture
def exercise(request) -> Exercise:
    """The exercise whose folder holds the running check's module."""
    from grader import catalogue

    spec = Path(request.module.__file__).resolve()
    for entry in catalogue.EXERCISES:
        if entry.spec_file.resolve() == spec:
            return entry
    pytest.fail(f"{spec} is the spec of no exercise folder in grader/exercises/")


@pytest.fixture
def learner_function(learner, exercise):
    """The exercise's function from the learner's file."""
    fn = getattr(learner, exercise.function, None)
    if fn is None:
        raise GradeFailure(f"your file does not define `{exercise.function}`: keep the function the stub defines",
                           kind=Kind.MISSING_FUNCTION)
    return fn


@pytest.fixture
def check() -> CheckRecord:
    """The record of the running check (performance, extra records for the report)."""
    session = _session()
    return session.record


@pytest.fixture
def rng(request) -> "torch.Generator":
    import torch

    seed = _seed(request.config)
    generator = torch.Generator()
    generator.manual_seed(zlib.crc32(f"{seed}:{request.node.nodeid}".encode()))
    return generator


@pytest.fixture(scope="session")
def mode() -> str:
    return _session().mode


@pytest.fixture(scope="session")
def device() -> str:
    return "cuda" if _session().mode == "gpu" else "cpu"


def pytest_runtest_logstart(nodeid, location):
    session = _SESSION
    if session is None:
        return
    session.record = CheckRecord(nodeid=nodeid, name=check_name(nodeid), passed=False)
    if session.process is not None:
        record = session.record
        session.process.record = record
        # Launches per call of the learner's kernels (calls of plain functions, a byte model, launch none).
        session.process.on_call = lambda outcome: record.launches.append(len(outcome.launches)) \
            if outcome.launches else None
        try:
            session.process.new_check(check_name(nodeid), time.monotonic() + check_clock(session, nodeid))
        except GradeFailure:
            pass  # the learner's process is gone; the check's first call restarts it and says why
    session.events.write("start", nodeid=nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and report.failed:
        exc = call.excinfo.value
        if isinstance(exc, GradeFailure):
            failure = exc
        elif isinstance(exc, AssertionError):
            failure = GradeFailure(str(exc).split("\nassert")[0].strip() or "a check failed")
        else:  # the spec itself failed: say so plainly, it is the course's bug
            # Not the learner's: describe_exception's "your code raised" would blame them for the grader's bug.
            detail = f"{type(exc).__name__}: {first_line(str(exc)) or '(no message)'}"
            failure = GradeFailure(f"the grader's check failed ({detail}): this is the grader's fault, not your "
                                   "file's; please report it", kind=Kind.WRONG)
        report.grade_message = str(failure)
        report.grade_kind = Kind.of(failure.kind)
        if report.grade_kind in STOPPING:
            item.session.shouldstop = str(failure)  # every other check would say the same
        elif report.grade_kind == Kind.TIMEOUT and _SESSION is not None \
                and _SESSION.consecutive_timeouts + 1 >= MAX_CONSECUTIVE_TIMEOUTS:
            item.session.shouldstop = str(failure)  # stop here, not after the next check's clock too


def pytest_runtest_logreport(report):
    session = _SESSION
    if session is None:
        return
    phase_done = (report.when == "call") or (report.when == "setup" and not report.passed)
    if not phase_done:
        if report.when == "teardown" and report.failed:
            record = CheckRecord(report.nodeid, check_name(report.nodeid), False,
                                 message=getattr(report, "grade_message", "teardown failed"), kind=Kind.WRONG)
            session.events.write("result", check=record.to_event())
        return
    record = session.record if session.record is not None and session.record.nodeid == report.nodeid \
        else CheckRecord(report.nodeid, check_name(report.nodeid), False)
    record.passed = bool(report.passed)
    record.skipped = bool(report.skipped)
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        record.message = reason.removeprefix("Skipped: ")
        record.kind = Kind.SKIPPED
    else:
        record.message = getattr(report, "grade_message", "")
        record.kind = getattr(report, "grade_kind", Kind.OK if report.passed else Kind.WRONG)
    session.events.write("result", check=record.to_event())
    if record.kind == Kind.TIMEOUT:
        session.consecutive_timeouts += 1
        if session.consecutive_timeouts >= MAX_CONSECUTIVE_TIMEOUTS and session.stop_reason is None:
            hung = "a check" if session.consecutive_timeouts == 1 else f"{session.consecutive_timeouts} checks in a row"
            session.stop_reason = (f"not run: {hung} did not finish within its clock, and every check calls your "
                                   "code the same way, so the grader stopped")
            session.events.write("stopped", reason=session.stop_reason)
    elif not report.skipped:
        session.consecutive_timeouts = 0


def pytest_runtest_protocol(item, nextitem):
    if _SESSION is not None and _SESSION.stop_reason is not None:
        item.session.shouldstop = _SESSION.stop_reason
    return None
