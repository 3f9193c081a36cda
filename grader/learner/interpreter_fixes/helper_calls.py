"""A jitted helper called inside a launch stops patching ``triton.language`` again on every call.

Triton's interpreter makes ``tl.load``, ``tl.sum`` and the rest callable from Python by patching the
``triton.language`` modules a kernel's globals hold (``_patch_lang``): once per launch
(``GridExecutor.__call__``, undone when the launch ends), and again on *every* call of a jitted
function inside it (``InterpretedFunction.__call__``). Many of ``triton.language``'s own functions are
jitted helpers (``tl.sum``, ``tl.max``, ``tl.zeros``, ``tl.cdiv``...), so a kernel with a reduction
calls one per program, and one of its own per loop iteration: 19 patches for a launch of three programs
of four loop steps (tests/test_interpreter_fixes.py), each a walk over every member of four modules with
``inspect.getmembers`` that finds nothing left to patch.

Inside a launch, a helper's call now patches only the modules the launch has not patched yet (a
helper from ``triton.language.standard`` sees ``tl.core``, a kernel ``tl``), so what a program runs
is what it ran before, patched the same way; outside a launch (a jitted function called from the
host) the interpreter's own call runs. As in Triton's interpreter, a launch undoes its own patches when
it ends, and what a helper's call patched (``tl.core``'s functions) is never undone.

It relies on three functions of ``triton/runtime/interpreter.py`` behaving as on Triton 3.6 to 3.9:
`RELIED_ON`, fingerprinted (`grader.learner.interpreter_fixes.fingerprints`); on any other source the
interpreter runs as Triton ships it, only slower. What it saves is part of the ``12-07-after`` rows of
docs/measurements/cpu-grading-speed.json, with the other changes that phase measured.
"""

from __future__ import annotations

#: What the fix wraps or relies on: the launch calls ``_patch_lang(self.fn)`` (a module global) before its
#: programs and restores the scope after them; a helper's call calls it before running; ``_patch_lang``
#: patches the ``tl`` and ``tl.core`` modules found in the function's globals.
RELIED_ON = (
    ("", "_patch_lang"),
    ("GridExecutor", "__call__"),
    ("InterpretedFunction", "__call__"),
)


def install(interpreter) -> bool:
    """Wrap ``_patch_lang`` and ``GridExecutor.__call__`` in ``interpreter``; True once installed."""
    original_patch = getattr(interpreter, "_patch_lang", None)
    executor = getattr(interpreter, "GridExecutor", None)
    original_call = getattr(executor, "__dict__", {}).get("__call__")
    if original_patch is None or original_call is None:
        return False
    if getattr(original_patch, "_grader_helper_calls", False):
        return True
    language = interpreter.tl
    patched_in_launch: list[set[int]] = []  # one set per launch in progress (a grid function may launch another)

    def _patch_lang(fn):
        modules = {id(value) for value in fn.__globals__.values() if value is language or value is language.core}
        if patched_in_launch and modules and modules <= patched_in_launch[-1]:
            return interpreter._LangPatchScope()  # nothing to patch and, so, nothing to undo
        if patched_in_launch:
            patched_in_launch[-1].update(modules)
        return original_patch(fn)

    def launch(self, *args, **kwargs):
        patched_in_launch.append(set())
        try:
            return original_call(self, *args, **kwargs)
        finally:
            patched_in_launch.pop()

    _patch_lang._grader_helper_calls = True
    _patch_lang.__wrapped__ = original_patch
    launch.__wrapped__ = original_call
    interpreter._patch_lang = _patch_lang
    executor.__call__ = launch
    return True
