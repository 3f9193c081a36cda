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
    _interpreter_compat()
    return "interpreter"


def _interpreter_compat() -> None:
    """Triton 3.6's interpreter converts loop bounds with int() on a shape-(1,) array, which NumPy >= 2.4
    rejects, so every kernel with ``range(0, n, BLOCK)`` over a runtime n fails there. Triton 3.9
    squeezes the array first; this gives 3.6 the same behaviour."""
    try:
        from triton.runtime import interpreter
    except Exception:
        return
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_course_compat", False):
        return

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patched._course_compat = True
    interpreter._patch_lang_tensor = patched


def device_for(mode: str) -> str:
    return "cuda" if mode == "gpu" else "cpu"
