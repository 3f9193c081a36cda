"""Hostile submission, exercise 1 (vector add): the reference solution read through `open` under an alias.

The path is built with the allowed `os.path` functions from `__file__`; the builtins that read and
run it are read into names of the file's own.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = ("reads solutions/ex01_vector_add.py, found from __file__ with os.path, through `_open = open`, runs it "
          "through `_run = exec` and returns the reference's answer; where the course tree is hidden it adds with "
          "torch")
KIND = "reference"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("alias of open", "alias of exec")
REJECTED_BY = ("the class grader's allow-list (grader.commands.source_allowlist), in `grade batch` and `--strict`: `_open = open` "
               "and `_run = exec` read builtins a kernel file never needs; the sandbox hides solutions/ from the "
               "learner's process, and the fallback's torch add is an op the watch records")

_open = open
_run = exec


def _reference():
    here = os.path.dirname(os.path.abspath(__file__))
    for up in ("..", "../..", "../../..", "../../../.."):
        path = os.path.join(here, up, "solutions", "ex01_vector_add.py")
        if os.path.isfile(path):
            scope = {"__name__": "reference"}
            with _open(path) as f:
                _run(f.read(), scope)
            return scope["add"]
    return None


def add(x, y):
    reference = _reference()
    if reference is not None:
        return reference(x, y)
    return x + y
