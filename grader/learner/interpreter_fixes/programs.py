"""The learner's Python that Triton runs inside a launch is watched as the learner's.

In Triton's interpreter a kernel's programs are the learner's Python, run one after another inside
the launch. On a GPU the compiler's front end runs the learner's Python that builds the kernel while
it compiles, inside the launch too: a ``triton.constexpr_function``, a call of a constexpr value, the
attributes a kernel reads on a module's objects (Triton 3.6 to 3.9, ``CodeGenerator``). The
torch-op watch (`grader.learner.call_watch`) takes every torch op inside a launch for Triton's own, rightly for
the interpreter's copies of the arguments to the host and back, so torch work done there went
unrecorded: a ``triton.constexpr_function`` that ran ``out.copy_(x + y)`` passed exercise 1.

`install` runs each program of an interpreted launch (and each jitted helper it calls), and
`install_compiled` the compiler's front end (``ASTSource.make_ir``), in the learner's context: what
they run is recorded like the launcher's own code ("part of the answer was computed with torch").
The interpreter's own copies happen before the first program and after the last, outside it.
"""

from __future__ import annotations

import functools
import inspect
import types


def _in_learner_context(fn):
    from grader.learner import call_watch  # the watch that records the learner's torch ops

    return call_watch._in_learner_context(fn)


def _calling(inner):
    def program(*args, **kwargs):
        return inner(*args, **kwargs)

    return program


def watched_program(fn):
    """``fn`` (a rewritten kernel or helper) run in the learner's context, with its own signature and
    globals: the interpreter reads the signature and annotations of what it runs, and finds
    ``triton.language`` in its globals to patch."""
    proto = _calling(_in_learner_context(fn))
    program = types.FunctionType(proto.__code__, fn.__globals__, fn.__name__, None, proto.__closure__)
    functools.update_wrapper(program, fn)
    program.__signature__ = inspect.signature(fn)
    return program


def install(interpreter) -> bool:
    """Wrap ``InterpretedFunction.rewrite``: what it returns runs in the learner's context; True once installed."""
    owner = getattr(interpreter, "InterpretedFunction", None)
    original = getattr(owner, "__dict__", {}).get("rewrite")
    if original is None:
        return False
    if getattr(original, "_grader_watched_programs", False):
        return True
    programs: dict[object, object] = {}

    def rewrite(self):
        fn = original(self)
        if fn not in programs:
            programs[fn] = watched_program(fn)
        return programs[fn]

    rewrite._grader_watched_programs = True
    rewrite.__wrapped__ = original
    owner.rewrite = rewrite
    return True


def install_compiled() -> bool:
    """Wrap ``ASTSource.make_ir`` (the compiler's front end, which runs the learner's Python); True once installed."""
    try:
        from triton.compiler.compiler import ASTSource
    except Exception:  # no Triton, or one whose compiler is laid out otherwise
        return False
    original = ASTSource.__dict__.get("make_ir")
    if original is None:
        return False
    if getattr(original, "_grader_watched_programs", False):
        return True
    make_ir = _in_learner_context(original)
    make_ir._grader_watched_programs = True
    ASTSource.make_ir = make_ir
    return True
