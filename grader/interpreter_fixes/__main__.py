"""python -m grader.interpreter_fixes: which fixes this Triton's interpreter takes, and why not."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
from triton.runtime import interpreter  # noqa: E402

from grader import interpreter_fixes  # noqa: E402
from grader.interpreter_fixes import fingerprints  # noqa: E402

print(f"triton {triton.__version__}")
for key, value in fingerprints.current(interpreter, interpreter_fixes.FINGERPRINTED).items():
    print(f"  {key:<40} {value}  {'known' if value in fingerprints.KNOWN.get(key, frozenset()) else 'UNKNOWN'}")
print("applied:", interpreter_fixes.apply())
