"""The course's own tests run without a GPU: Triton's interpreter, set before Triton is imported.

Tests that grade (start a learner process, build the site or drive a browser) carry the `grading`
marker, applied here by the rule in tests/grading_marker.py; `pytest -m "not grading"` is the fast loop.
"""

import functools
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    import torch

    _HAS_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover - torch is a dependency
    _HAS_CUDA = False
if not _HAS_CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")
    # One torch thread in each test process: two workers share two cores with the gradings they start, and
    # OpenMP's idle threads spin for the CPU those need (docs/measurements/cpu-grading-speed.json, the rows
    # torch_ops_beside_a_grading). The grader's own processes do the same in the interpreter
    # (grader.learner.runner.main).
    torch.set_num_threads(1)

import pytest  # noqa: E402

from tests import grading_marker  # noqa: E402


@functools.cache
def _grading_functions(module_path: str) -> frozenset[str]:
    return frozenset(grading_marker.grading_functions(Path(module_path).read_text()))


def _grades(item) -> bool:
    module = getattr(item, "module", None)
    if module is None or not getattr(module, "__file__", None):
        return False
    grading = _grading_functions(module.__file__)
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


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _grades(item):
            item.add_marker(pytest.mark.grading)
    if _HAS_CUDA:
        return
    skip_gpu = pytest.mark.skip(reason="needs an NVIDIA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
