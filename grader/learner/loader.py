"""Importing the learner's file: the one way every process that runs it does.

The learner's process (`grader.learner.runner`) and the child that records `grade show`'s access
map (`grader.learner.show_child`) both import the file through `import_file`: as a module named
after the file (``learner_<stem>``), registered in ``sys.modules`` before it runs (so its dataclasses
and pickles find it), with whatever it raises left to the caller, which turns it into a sentence
(`grader.wire.failures.describe_exception`). `grade bench` imports it the same way in its own
process (`grader.commands.bench_sweep` says why).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


class NotAPythonFile(ImportError):
    """The path is not something Python can import as a module."""


def module_name(path: str | Path, prefix: str = "learner") -> str:
    return f"{prefix}_{Path(path).stem}"


def import_file(path: str | Path, *, prefix: str = "learner") -> ModuleType:
    """Run ``path`` as a module and return it; NotAPythonFile when Python cannot import it, and
    whatever the file itself raises while it runs."""
    name = module_name(path, prefix)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise NotAPythonFile(f"cannot import {path}: is it a Python file?")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
