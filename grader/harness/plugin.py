"""The pytest plugin that runs one exercise's spec against one learner file.

Options: ``--learner-file PATH`` (required), ``--grade-seed N``, ``--grade-events FILE`` (JSON
lines for the parent `grade` process), ``--grade-done FILE`` (node ids already reported by an
earlier child, deselected here so a crash costs only the check that crashed).

Fixtures for specs: ``learner`` (the imported file), ``rng`` (a torch.Generator seeded from the
run seed and the test's id, so ``--seed`` replays every case exactly), ``device``, ``mode``.

Events written, one JSON object per line:
``{"event": "mode", "mode", "device", "seed", "triton", "torch", "python", "interpreter_fixes"}``,
``{"event": "collected", "nodeids": [...], "names": [...]}``,
``{"event": "start", "nodeid"}``,
``{"event": "result", "nodeid", "name", "passed", "skipped", "message", "kind", "launches", "performance"}``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import zlib
from pathlib import Path

import pytest

from grader import checks
from grader.failures import GradeFailure, describe_exception

EXIT_RESTART = 75  # the child asks to be restarted: a CUDA error poisoned its context
#: Failures after which running the other checks would only repeat the same sentence.
STOPPING_KINDS = {"not_implemented", "import"}


def pytest_addoption(parser):
    group = parser.getgroup("grade")
    group.addoption("--learner-file", default=None, help="the file implementing the exercise")
    group.addoption("--grade-seed", type=int, default=None, help="seed for random inputs")
    group.addoption("--grade-events", default=None, help="JSON-lines file for the grade command")
    group.addoption("--grade-done", default=None, help="file of node ids to skip (already reported)")


class _Events:
    def __init__(self, path: str | None):
        self._file = open(path, "a", buffering=1) if path else None

    def write(self, **event) -> None:
        if self._file is not None:
            self._file.write(json.dumps(event, default=str) + "\n")
            self._file.flush()


_events = _Events(None)
_learner_module = None
_learner_error: GradeFailure | None = None


def check_name(nodeid: str) -> str:
    """'grader/specs/ex01_vector_add.py::test_matches[fp16-1025]' -> 'matches[fp16-1025]'."""
    name = nodeid.split("::")[-1]
    return name[5:] if name.startswith("test_") else name


def _seed(config) -> int:
    seed = config.getoption("--grade-seed")
    if seed is None:
        seed = int(os.environ.get("GRADE_SEED", "0")) or int.from_bytes(os.urandom(3), "big")
        config.option.grade_seed = seed
    return seed


def _import_learner(path: str):
    spec = importlib.util.spec_from_file_location(f"learner_{Path(path).stem}", path)
    if spec is None or spec.loader is None:
        raise GradeFailure(f"cannot import {path}: is it a Python file?")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pytest_configure(config):
    global _events, _learner_module, _learner_error
    _events = _Events(config.getoption("--grade-events"))
    path = config.getoption("--learner-file")
    if path is None:
        return
    import torch

    mode = "interpreter" if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available() else "gpu"
    fixes = None
    if mode == "interpreter":
        from grader import interpreter_fixes

        fixes = interpreter_fixes.apply()  # for plain `pytest -p grader.harness.plugin` runs too
    checks.CONTEXT.learner_file = str(Path(path).resolve())
    checks.CONTEXT.mode = mode
    checks.CONTEXT.device = "cuda" if mode == "gpu" else "cpu"
    seed = _seed(config)
    try:
        import triton

        triton_version = triton.__version__
    except Exception as exc:  # a broken Triton install is a setup problem, said plainly
        triton_version = f"unavailable ({exc})"
    _events.write(event="mode", mode=mode, device=checks.CONTEXT.device, seed=seed,
                  triton=triton_version, torch=torch.__version__, python=sys.version.split()[0],
                  interpreter_fixes=fixes)
    try:
        _learner_module = _import_learner(path)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        failure = describe_exception(exc, checks.CONTEXT.learner_file)
        kind = "not_implemented" if failure.kind == "not_implemented" else "import"
        _learner_error = GradeFailure(f"importing {path} failed: {failure}", kind=kind)


def _grades_bf16(item) -> bool:
    """Does the test run the learner's kernel with torch.bfloat16 among its parameters (directly or
    inside a tuple)? (A byte-model check parametrized by dtype runs no kernel.)"""
    import torch

    def holds(value) -> bool:
        if value is torch.bfloat16:
            return True
        return isinstance(value, (tuple, list)) and any(holds(v) for v in value)

    callspec = getattr(item, "callspec", None)
    return (callspec is not None and "learner_function" in getattr(item, "fixturenames", ())
            and any(holds(v) for v in callspec.params.values()))


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected theirs
def pytest_collection_modifyitems(session, config, items):
    if checks.CONTEXT.mode == "interpreter" and config.getoption("--learner-file"):
        from grader import interpreter_fixes

        if not interpreter_fixes.bf16_trustworthy():
            # This Triton's interpreter is not one the bf16 fix knows: its bf16 results mean nothing.
            for item in items:
                if _grades_bf16(item):
                    item.add_marker(pytest.mark.skip(reason=interpreter_fixes.BF16_ON_GPU_ONLY))
    done_file = config.getoption("--grade-done")
    if done_file and os.path.exists(done_file):
        done = set(Path(done_file).read_text().split())
        kept = [item for item in items if item.nodeid not in done]
        if len(kept) != len(items):
            config.hook.pytest_deselected(items=[i for i in items if i.nodeid in done])
            items[:] = kept
    _events.write(event="collected", nodeids=[i.nodeid for i in items], names=[check_name(i.nodeid) for i in items])


@pytest.fixture(scope="session")
def learner():
    if _learner_error is not None:
        raise _learner_error
    if _learner_module is None:
        pytest.fail("no --learner-file given: run through `grade exercise N`, or pass --learner-file")
    return _learner_module


@pytest.fixture
def rng(request) -> "torch.Generator":
    import torch

    seed = _seed(request.config)
    generator = torch.Generator()
    generator.manual_seed(zlib.crc32(f"{seed}:{request.node.nodeid}".encode()))
    return generator


@pytest.fixture(scope="session")
def mode() -> str:
    return checks.CONTEXT.mode


@pytest.fixture(scope="session")
def device() -> str:
    return checks.CONTEXT.device


@pytest.fixture
def learner_function(learner, request):
    """The exercise's function from the learner's file, found by the spec's FUNCTION name."""
    name = getattr(request.module, "FUNCTION", None)
    fn = getattr(learner, name, None) if name else None
    if fn is None:
        raise GradeFailure(f"your file does not define `{name}`: keep the function the stub defines")
    return fn


def pytest_runtest_logstart(nodeid, location):
    checks.CONTEXT.launches.clear()
    checks.CONTEXT.performance = None
    checks.CONTEXT.extra = {}
    _events.write(event="start", nodeid=nodeid)


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
        else:
            failure = describe_exception(exc, checks.CONTEXT.learner_file)
        report.grade_message = str(failure)
        report.grade_kind = failure.kind
        if failure.kind in STOPPING_KINDS:
            # Every other check would say the same: stop here and say it once.
            item.session.shouldstop = str(failure)


def pytest_runtest_logreport(report):
    phase_done = (report.when == "call") or (report.when == "setup" and not report.passed)
    if not phase_done:
        if report.when == "teardown" and report.failed:
            _events.write(event="result", nodeid=report.nodeid, name=check_name(report.nodeid), passed=False,
                          skipped=False, message=getattr(report, "grade_message", "teardown failed"), kind="wrong")
        return
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        message = reason.removeprefix("Skipped: ")
    else:
        message = getattr(report, "grade_message", "")
    kind = getattr(report, "grade_kind", "ok" if report.passed else "wrong")
    _events.write(event="result", nodeid=report.nodeid, name=check_name(report.nodeid), passed=report.passed,
                  skipped=report.skipped, message=message, kind=kind,
                  launches=list(checks.CONTEXT.launches), performance=checks.CONTEXT.performance,
                  extra=checks.CONTEXT.extra or None)
    if kind == "fatal":
        # The CUDA context is gone; nothing after this in the process can be trusted.
        os._exit(EXIT_RESTART)
