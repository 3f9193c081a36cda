"""GPU or interpreter: decided once per process, before Triton is imported.

Triton reads ``TRITON_INTERPRET`` when kernels are decorated, so the variable must be set
before ``import triton`` anywhere in the process. `select` asks `grader.device` (which imports
torch only where a GPU driver is installed, and torch does not import Triton) and sets or clears
the variable accordingly. In interpreter mode it also installs `grader.learner.interpreter_fixes` (before any learner file is
imported), so that the interpreter computes what a GPU computes.
"""

from __future__ import annotations

import os
import sys

from grader import device


def select(*, force_interpreter: bool = False) -> str:
    """Return "gpu" or "interpreter" and prepare the environment for it (`grader.device` decides)."""
    if "triton" in sys.modules and not device.interpreter_requested():
        # Too late to switch: whatever Triton was imported as is what we have.
        return "gpu"
    if device.current(force_interpreter=force_interpreter).gpu:
        os.environ.pop(device.INTERPRETER_VARIABLE, None)
        from grader.learner import interpreter_fixes  # after the variable is settled: it imports Triton

        interpreter_fixes.apply_compiled()  # the learner's Python that the compiler runs is the learner's
        return "gpu"
    os.environ[device.INTERPRETER_VARIABLE] = "1"
    from grader.learner import interpreter_fixes

    interpreter_fixes.apply()  # bf16 arithmetic, loop bounds and loop variables as on a GPU
    return "interpreter"


def prepare_interpreter() -> dict[str, bool]:
    """Every fix of Triton's interpreter the grader applies, in the learner's process before its
    file is imported: ``{fix name: applied}`` (`grader.learner.interpreter_fixes`)."""
    from grader.learner import interpreter_fixes

    return interpreter_fixes.apply()
