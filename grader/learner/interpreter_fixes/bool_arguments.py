"""A plain ``bool`` kernel argument in Triton 3.6's interpreter, taken as the compiler takes it.

Compiled, a parameter without ``tl.constexpr`` that receives ``True`` or ``False`` is an ``i1``
(``mangle_type``), and the kernel runs. Triton 3.6's interpreter converts each plain argument with
``_implicit_cvt``, whose integer branch also catches a bool (``bool`` is an ``int`` in Python): it
stores the value in a 32-bit NumPy array typed ``tl.int1``, and ``TensorHandle`` refuses the pair
("numpy data itemsize (32 bits) exceeds dtype primitive_bitwidth (1 bits)"). So a kernel that takes
a flag such as ``HAS_BIAS`` as a plain argument is right on a GPU and fails in the interpreter.
Triton 3.8 and 3.9 convert a bool first, into a ``np.bool_`` typed ``tl.int1``
(triton-lang/triton#9565); `fix_bool_arguments` does the same where the interpreter's
``_implicit_cvt`` still lacks that branch, and changes nothing elsewhere. The check reads the source,
not the version number: Triton 3.6.0 needs the fix, 3.8.0 and 3.9.0 do not, and any other version is
patched or left alone by what its ``_implicit_cvt`` says.
"""

from __future__ import annotations

import inspect

import numpy as np


def needs_fix(convert) -> bool:
    """Does ``convert`` (an interpreter's ``_implicit_cvt``) send a bool down its integer branch?"""
    try:
        source = inspect.getsource(convert)
    except (OSError, TypeError):
        return False  # nothing to read: patch nothing rather than guess
    return "isinstance(arg, int)" in source and "isinstance(arg, bool)" not in source


def fix_bool_arguments(interpreter) -> bool:
    """Convert a plain bool kernel argument into ``tl.int1`` in an interpreter that cannot. True if patched."""
    original = getattr(interpreter, "_implicit_cvt", None)
    if original is None or getattr(original, "_course_bool_arguments", False) or not needs_fix(original):
        return False
    tl, handle_type = interpreter.tl, interpreter.TensorHandle

    def implicit_cvt(arg, _original=original):
        if isinstance(arg, bool):  # the branch Triton 3.8 puts before the integer one
            return tl.tensor(handle_type(np.array([arg], dtype=np.bool_), tl.int1), tl.int1)
        return _original(arg)

    implicit_cvt._course_bool_arguments = True
    implicit_cvt.__wrapped__ = original
    # The interpreter looks the name up in its module at each call (the launch, and tuples of arguments).
    interpreter._implicit_cvt = implicit_cvt
    return True
