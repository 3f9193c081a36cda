"""The course's own tests run without a GPU: Triton's interpreter, set before Triton is imported.

Tests that grade (start a learner process, build the site or drive a browser) carry the `grading`
marker, applied here by the rule in tests/grading_marker.py; `pytest -m "not grading"` is the fast loop.
"""

import fcntl
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# torch is a dependency: a Python without it stops here with "No module named 'torch'" (the README's
# install), not later with a NameError.
import torch  # noqa: E402

_HAS_CUDA = torch.cuda.is_available()
if not _HAS_CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")
    # One torch thread in each test process: two workers share two cores with the gradings they start, and
    # OpenMP's idle threads spin for the CPU those need (docs/measurements/cpu-grading-speed.json, the rows
    # torch_ops_beside_a_grading). The grader's own processes do the same in the interpreter
    # (grader.learner.runner.main).
    torch.set_num_threads(1)

import pytest  # noqa: E402

import site_helpers as helpers  # noqa: E402
from tests import grading_marker  # noqa: E402

#: This file's fixtures that build the site or start a browser: a test that asks for one, itself or through
#: another fixture, grades (tests/grading_marker.py's rule reads only the test's own module).
GRADING_FIXTURES = frozenset({"built_site", "browser"})


@functools.cache
def _grading_functions(module_path: str) -> frozenset[str]:
    return frozenset(grading_marker.grading_functions(Path(module_path).read_text()))


def _grades(item) -> bool:
    module = getattr(item, "module", None)
    if module is None or not getattr(module, "__file__", None):
        return False
    grading = _grading_functions(module.__file__) | GRADING_FIXTURES
    return item.originalname in grading or bool(grading & set(item.fixturenames))


def _starts_a_grading_process(args) -> bool:
    """Python (the grader's CLI, a learner child, a compile) or a browser; git and shells are not grading."""
    first = args[0] if isinstance(args, (list, tuple)) else str(args).split()[0]
    program = Path(str(first)).name
    return str(first) == sys.executable or program.startswith("python") or "chrom" in program


@pytest.fixture(autouse=True)
def _unmarked_tests_start_no_grading(request, monkeypatch):
    """A test outside the `grading` marker that starts Python or a browser fails and says so."""
    if request.node.get_closest_marker("grading"):
        yield
        return
    real_popen = subprocess.Popen

    class GuardedPopen(real_popen):
        def __init__(self, args, *rest, **kwargs):
            if _starts_a_grading_process(args):
                self.args, self.returncode = args, None  # what Popen's repr and __del__ read
                raise AssertionError(f"{request.node.nodeid} starts {args!r} but is not marked `grading`: "
                                     "name what it calls in tests/grading_marker.py's ENTRY_POINTS")
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", GuardedPopen)
    yield


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Marks before every other plugin's hook (so `-m "not grading"` sees the marker), orders after them."""
    for item in items:
        if _grades(item):
            item.add_marker(pytest.mark.grading)
    if not _HAS_CUDA:
        skip_gpu = pytest.mark.skip(reason="needs an NVIDIA GPU (torch.cuda.is_available() is False)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip_gpu)
    result = yield
    # The `long` tests first: `--dist worksteal` hands each worker a contiguous half of this list and a
    # worker that runs dry steals from the end of the other's, so a minute-long test left at the end of a
    # half ran alone while the other worker sat idle (the browser's clipping test: 64 s of the last 65 s of
    # a 481 s run, one worker done 38 s before the other). Stable, after pytest's grouping by fixture: the
    # rest keep their order.
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
    return result


# ------------------------------------------------------------------------------------------------
# The learner's site and Chromium on it: tests/test_site.py's and tests/test_site_learner.py's
# ------------------------------------------------------------------------------------------------

IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The learner's site (`mkdocs build --strict`), built once for the whole run: under xdist the first
    worker to ask builds it, holding a lock in the run's shared temporary folder, and the others wait for
    that build and read it. (A module fixture built it once per module and worker: three builds of
    12-19 s each in a `-n 2` run, where one serves every test, as none writes to it.)"""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        out = tmp_path_factory.mktemp("site")
        done = helpers.build_site(out)
        record = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    else:
        shared = tmp_path_factory.getbasetemp().parent  # the run's folder; each worker's is below it
        out, result = shared / "learner-site", shared / "learner-site.json"
        with open(shared / "learner-site.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not result.is_file():  # a failed build is reported by every worker, not built again
                done = helpers.build_site(out)
                result.write_text(json.dumps({"returncode": done.returncode, "stdout": done.stdout,
                                              "stderr": done.stderr}))
            record = json.loads(result.read_text())
    if record["returncode"] != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{record['stdout'][-4000:]}\n{record['stderr'][-4000:]}")
    return out


@pytest.fixture(scope="session")
def committed_plots(tmp_path_factory):
    """docs/scripts/plot_measurements.py run once per worker on the committed measurements: (the module, with
    what it drew point by point; the folder it drew into). tests/test_figures.py reads what it drew and
    tests/test_site.py compares the folder with docs/assets/plots (each run took 6-8 s; four ran before)."""
    out = tmp_path_factory.mktemp("plots")
    return helpers.run_plot_script(None, out), out


@pytest.fixture(scope="session")
def browser(built_site, tmp_path_factory):
    """Headless Chromium on the built site, served on 127.0.0.1: one per worker for every browser test.
    It skips when Chromium, chromedriver or selenium is missing, except in CI (CI=true), where it fails."""
    chromium, driver_path, reason = helpers.find_chromium()
    if reason:
        if IN_CI:
            pytest.fail(f"CI=true but the browser test cannot run: {reason}")
        pytest.skip(reason)
    profile = tmp_path_factory.mktemp("chromium-profile")
    driver = helpers.start_chromium(chromium, driver_path, profile)
    driver.set_page_load_timeout(30)
    driver.replacements = {}  # paths served with other bytes than the built site's (helpers.serve)
    with helpers.serve(built_site, driver.replacements) as base_url:
        driver.base_url = base_url
        try:
            yield driver
        finally:
            driver.quit()
