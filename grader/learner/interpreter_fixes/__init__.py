"""Fixes for Triton's interpreter, applied before a learner's file is imported.

Without a GPU the grader runs kernels in Triton's interpreter (``TRITON_INTERPRET=1``), which
differs from a compiled kernel in ways that fail correct code: bf16 arithmetic on raw bits
(`grader.learner.interpreter_fixes.bf16`), loop bounds computed in the kernel on Triton 3.6 and loop
variables that are Python ints (`grader.learner.interpreter_fixes.loops`), a plain ``bool`` argument on
Triton 3.6 (`grader.learner.interpreter_fixes.bool_arguments`); and it passes code that does not
compile, a kernel reading a global that is not a ``tl.constexpr``
(`grader.learner.interpreter_fixes.constexpr_globals`) or handed an argument the compiler would not build
into it, such as a Python function as a constexpr (`grader.learner.interpreter_fixes.kernel_arguments`). And
the learner's Python it runs inside a launch, the kernel's programs, is watched as the learner's
(`grader.learner.interpreter_fixes.programs`). One fix is for speed alone: a jitted helper called inside
a launch no longer patches ``triton.language`` again on every call
(`grader.learner.interpreter_fixes.helper_calls`). `apply_compiled` holds a GPU's launches to the same two rules
(the compiler's front end runs the learner's Python too). `apply` installs each fix
whose target source is one it knows (`grader.learner.interpreter_fixes.fingerprints`) and says which it
installed; docs/grading.md lists every difference and what the grader does about it.

    from grader.learner import interpreter_fixes
    interpreter_fixes.apply()            # {"loop_bounds": ..., "bool_arguments": ..., "loop_variables": ...,
                                         #  "bf16": ..., "constexpr_globals": ..., "kernel_arguments": ..., "watched_programs": ...,
                                         #  "helper_calls": ...}
    interpreter_fixes.bf16_trustworthy() # False: grade bf16 on a GPU only, and say so
"""

from __future__ import annotations

import os

from grader.learner.interpreter_fixes import bf16 as _bf16
from grader.learner.interpreter_fixes import (bool_arguments, constexpr_globals, fingerprints, helper_calls,
                                              kernel_arguments, loops, programs)

#: What the loop-variable fix relies on: the rewriter compiles each kernel from our syntax tree
#: with the interpreter's globals, and ``tl.range`` is a Python ``range`` there.
LOOP_VARIABLES_RELY_ON = (
    ("FunctionRewriter", "_compile_and_exec"),
    ("FunctionRewriter", "_transform_ast"),
    ("FunctionRewriter", "rewrite_ast"),
    ("", "_patch_lang_core"),
)
FINGERPRINTED = (*_bf16.WRAPPED, *_bf16.RELIED_ON, *LOOP_VARIABLES_RELY_ON, *constexpr_globals.RELIED_ON,
                 *helper_calls.RELIED_ON)
#: Functions of ``triton.compiler.code_generator`` whose rule a fix copies into the interpreter.
COMPILER_RULES = constexpr_globals.RULE

#: The line a learner reads when bf16 cases are left to a GPU.
BF16_ON_GPU_ONLY = "bf16: checked on a GPU only — Triton's interpreter does not compute bf16"

_applied: dict[str, bool] | None = None
_unknown: list[str] = []


def _interpreter():
    try:
        from triton.runtime import interpreter
    except Exception:  # no Triton, or one whose interpreter does not import
        return None
    return interpreter


def install(interpreter) -> tuple[dict[str, bool], list[str]]:
    """Install into ``interpreter`` (the module) every fix whose sources it knows.

    Returns ({fix name: installed}, [functions whose source is unknown]).
    """
    unknown: list[str] = []
    applied = {"loop_bounds": loops.fix_loop_bounds(interpreter),
               "bool_arguments": bool_arguments.fix_bool_arguments(interpreter)}
    known, missing = fingerprints.matches(interpreter, LOOP_VARIABLES_RELY_ON)
    applied["loop_variables"] = known and loops.fix_loop_variables(interpreter)
    unknown += missing
    known, missing = fingerprints.matches(interpreter, (*_bf16.WRAPPED, *_bf16.RELIED_ON))
    routed = known and _bf16.routes_are_thin(interpreter)
    if routed:
        _bf16.install(interpreter)
    unknown += missing + ([] if routed or missing else ["InterpreterBuilder routes"])
    applied["bf16"] = routed
    applied["constexpr_globals"] = False
    try:
        from triton.compiler import code_generator
    except Exception:  # a Triton whose compiler front end does not import here
        code_generator = None
    known, missing = fingerprints.matches(interpreter, constexpr_globals.RELIED_ON)
    if code_generator is not None:
        rule_known, rule_missing = fingerprints.matches(code_generator, constexpr_globals.RULE)
        known, missing = known and rule_known, missing + rule_missing
    unknown += missing
    if known and code_generator is not None:
        applied["constexpr_globals"] = constexpr_globals.install(interpreter)
    # A wrapper around the launch, relying on nothing of the interpreter but ``run(*args, grid, warmup, **kw)``.
    owner = getattr(interpreter, "InterpretedFunction", None)
    applied["kernel_arguments"] = isinstance(owner, type) and kernel_arguments.install(owner)
    applied["watched_programs"] = programs.install(interpreter)
    known, missing = fingerprints.matches(interpreter, helper_calls.RELIED_ON)
    unknown += missing
    applied["helper_calls"] = known and helper_calls.install(interpreter)
    return applied, unknown


def apply() -> dict[str, bool]:
    """Install every fix this interpreter's source allows; {fix name: installed}. Idempotent.

    ``GRADE_INTERPRETER_FIXES=off`` in the environment installs none (to see what Triton's own
    interpreter does; bf16 is then checked on a GPU only).
    """
    global _applied
    if _applied is not None:
        return dict(_applied)
    interpreter = _interpreter()
    if interpreter is None or os.environ.get("GRADE_INTERPRETER_FIXES", "").lower() == "off":
        _applied = {"loop_bounds": False, "bool_arguments": False, "loop_variables": False, "bf16": False,
                    "constexpr_globals": False,
                    "kernel_arguments": False, "watched_programs": False, "helper_calls": False}
        return dict(_applied)
    _applied, unknown = install(interpreter)
    _unknown.extend(unknown)
    return dict(_applied)


def apply_compiled() -> dict[str, bool]:
    """GPU mode: hold compiled launches to the kernel-argument rule and run the compiler's front end in
    the learner's context (both wrap stable entry points, not the interpreter's source)."""
    return {"kernel_arguments": kernel_arguments.install_compiled(), "watched_programs": programs.install_compiled()}


def fingerprint_sources() -> None:
    """Hash the interpreter sources the fixes check, without installing anything: the learner's template
    (`grader.commands.isolation`) does it once, so every learner's process forked from it finds them hashed
    instead of reading the source of every function they name again."""
    interpreter = _interpreter()
    if interpreter is not None:
        fingerprints.matches(interpreter, FINGERPRINTED)
    try:
        from triton.compiler import code_generator
    except Exception:  # a Triton whose compiler front end does not import here
        return
    fingerprints.matches(code_generator, COMPILER_RULES)


def bf16_trustworthy() -> bool:
    """Does this process's interpreter compute bf16 as a GPU does (the fix is installed)?"""
    return apply()["bf16"]


def unknown_sources() -> list[str]:
    """The functions whose source no fix knows (why a fix was not installed)."""
    apply()
    return list(_unknown)


__all__ = ["BF16_ON_GPU_ONLY", "apply", "apply_compiled", "bf16_trustworthy", "install", "unknown_sources"]
