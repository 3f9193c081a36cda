"""GPU or interpreter: decided once per process, before Triton is imported.

Triton reads ``TRITON_INTERPRET`` when kernels are decorated, so the variable must be set
before ``import triton`` anywhere in the process. `select` imports torch (which does not import
Triton), asks whether CUDA is usable, and sets or clears the variable accordingly.
"""

from __future__ import annotations

import os
import sys


def select(*, force_interpreter: bool = False) -> str:
    """Return "gpu" or "interpreter" and prepare the environment for it."""
    if "triton" in sys.modules and not os.environ.get("TRITON_INTERPRET"):
        # Too late to switch: whatever Triton was imported as is what we have.
        return "gpu"
    import torch

    if not force_interpreter and os.environ.get("TRITON_INTERPRET") != "1" and torch.cuda.is_available():
        os.environ.pop("TRITON_INTERPRET", None)
        return "gpu"
    os.environ["TRITON_INTERPRET"] = "1"
    fix_interpreter_loop_bounds()
    return "interpreter"


def prepare_interpreter() -> dict[str, bool]:
    """Every fix of Triton's interpreter the grader applies, before learner code is imported:
    ``{fix name: applied}`` (a fix whose target source looks different is not applied)."""
    return {"loop_bounds": fix_interpreter_loop_bounds()}


def fix_interpreter_loop_bounds() -> bool:
    """Let Triton 3.6's interpreter use loop bounds computed in the kernel. Returns True if patched.

    The interpreter turns a loop bound into a Python int with ``int(self.handle.data)``; a
    program id or a kernel argument is a one-element array there, and NumPy 2.4 made ``int()``
    of a one-element array a TypeError ("only 0-dimensional arrays can be converted to Python
    scalars"). So ``for row in tl.range(pid, n_rows, tl.num_programs(0))`` fails in Triton
    3.6's interpreter (it compiles fine for a GPU). Triton 3.9 squeezes the array first; this
    does the same for older interpreters, only where their source shows the old spelling.
    """
    import inspect

    try:
        import numpy as np
        from triton.runtime import interpreter
    except ImportError:
        return False
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_course_squeezes_index", False):
        return False
    try:
        if "int(self.handle.data))" not in inspect.getsource(original):
            return False
    except (OSError, TypeError):
        return False

    def patch_lang_tensor(tensor, scope, _original=original):
        _original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).squeeze()))

    patch_lang_tensor._course_squeezes_index = True
    interpreter._patch_lang_tensor = patch_lang_tensor
    return True
