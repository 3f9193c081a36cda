"""python -m grader.learner.interpreter_fixes: which fixes this Triton's interpreter takes, and why not."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
from triton.compiler import code_generator  # noqa: E402
from triton.runtime import interpreter  # noqa: E402

from grader.learner import interpreter_fixes  # noqa: E402
from grader.learner.interpreter_fixes import fingerprints  # noqa: E402

print(f"triton {triton.__version__}")
current = {**fingerprints.current(interpreter, interpreter_fixes.FINGERPRINTED),
           **fingerprints.current(code_generator, interpreter_fixes.COMPILER_RULES)}
for key, value in current.items():
    print(f"  {key:<40} {value}  {'known' if value in fingerprints.KNOWN.get(key, frozenset()) else 'UNKNOWN'}")
print("applied:", interpreter_fixes.apply())
