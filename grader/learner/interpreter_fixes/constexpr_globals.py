"""The compiler's rule on global names, held in the interpreter too.

A compiled Triton kernel may read a module-level name only if it is a ``tl.constexpr``, a module, a
jitted function, a dtype, ``None`` or one of Triton's own objects: ``LOG2E = 1.4426950408889634``
read inside a kernel does not compile (``NameError: Cannot access global variable LOG2E from within
@jit'ed function``, Triton 3.6 to 3.9). Triton's interpreter runs the kernel as Python, where any
global can be read, so such a file passed on a laptop and failed on a GPU.

`install` wraps ``InterpretedFunction.rewrite``, which the interpreter calls before it first runs a
kernel or a jitted helper: the names the function's body reads are looked up as the compiler's
``global_lookup`` does (``CodeGenerator._define_name_lookup``), and a name it would refuse raises
what a GPU reports. The learner reads one sentence that names the global, the kernel line that
reads it and the fix (`refusal`), raised *at that line* (`raise_at`), so the grader's location and a
plain traceback point at the line that reads the global, not at the launch.

A ``tl.constexpr`` global is held to what a constexpr argument may hold
(`grader.learner.interpreter_fixes.kernel_arguments.plain_constant`): ``SIDE = tl.constexpr(some_function)``
is called by the compiler on the host while it compiles, never in the kernel.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
from types import ModuleType

from grader.learner.interpreter_fixes import kernel_arguments

#: What the fix relies on: the interpreter's entry point, and the compiler rule it copies.
RELIED_ON = (("InterpretedFunction", "rewrite"),)
RULE = (("CodeGenerator", "_define_name_lookup"), ("CodeGenerator", "_is_constexpr_global"))


class CompilationError(Exception):
    """Named as Triton's own, so the report reads "your kernel did not compile", as on a GPU."""


def refusal(name: str, kernel: str = "the kernel", line: int | None = None, value=None) -> str:
    """One sentence: the global, the kernel line that reads it, the compiler's words and the fix."""
    where = f" (line {line})" if line else ""
    if isinstance(value, language_constexpr()):
        return (f"`{kernel}` reads the global `{name}`{where}, a `tl.constexpr` that holds "
                f"{kernel_arguments._described(value.value)}, which Triton's compiler calls on the host while it "
                "compiles, never in the kernel: make it a `@triton.jit` function, or a constexpr of a number, a "
                "string or a dtype")
    if isinstance(value, (bool, int, float, str)):
        fix = f"write `{name} = tl.constexpr({value!r})`"
    else:
        fix = f"pass `{name}` to the kernel as an argument"
    return (f"`{kernel}` reads the global `{name}`{where}, which is not a `tl.constexpr`: Triton's compiler refuses "
            f"that (`Cannot access global variable {name} from within @jit'ed function`); {fix}")


def language_constexpr() -> type:
    import triton.language as language

    return language.constexpr


def raise_at(error: BaseException, filename: str, line: int) -> None:
    """Raise ``error`` from a frame at ``filename:line``, so the traceback ends at the kernel's line."""
    code = compile("\n" * (line - 1) + "raise error", filename, "exec")
    exec(code, {"error": error})


def first_reads(fn) -> dict[str, int]:
    """The names the body of ``fn`` reads and does not bind itself, with the line of the first read
    (counted in the function's source, its first line 1)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return {}
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None:
        return {}
    bound = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    bound |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
    read: dict[str, int] = {}
    for statement in node.body:  # not the decorators, defaults or annotations: the compiler allows those
        for sub in ast.walk(statement):
            if isinstance(sub, ast.Name):
                if isinstance(sub.ctx, ast.Load):
                    read.setdefault(sub.id, sub.lineno)
                else:
                    bound.add(sub.id)
    return {name: line for name, line in read.items() if name not in bound}


def names_read(fn) -> list[str]:
    """The names the body of ``fn`` reads and does not bind itself, each once."""
    return list(first_reads(fn))


@functools.cache
def builtin_names() -> frozenset[str]:
    """The names the compiler resolves itself (``CodeGenerator.builtin_namespace``: ``range``, ``min``...)."""
    from triton.compiler.code_generator import CodeGenerator

    return frozenset(CodeGenerator.builtin_namespace)


def allowed(value, name: str, language, jit_types: tuple[type, ...]) -> bool:
    """``global_lookup``'s test, term by term (Triton 3.6 to 3.9)."""
    if isinstance(value, language.constexpr):  # a constexpr holds what a constexpr argument may hold
        return kernel_arguments.plain_constant(value)
    module = getattr(value, "__module__", None) or ""
    return (name in builtin_names()
            or value is None
            or type(value) is ModuleType
            or isinstance(value, jit_types)
            or bool(getattr(value, "__triton_builtin__", False))
            or bool(getattr(value, "__triton_aggregate__", False))
            or module.startswith("triton.language")
            or module.startswith("triton.experimental.gluon.language")
            or isinstance(value, language.dtype)
            or (isinstance(value, tuple) and hasattr(value, "_fields")))


def refused_read(fn, language, jit_types: tuple[type, ...]) -> tuple[str, int, object] | None:
    """(name, line in the file, value) of the first global of ``fn``'s body the compiler would refuse."""
    scope = dict(getattr(fn, "__globals__", {}))
    closure = getattr(fn, "__closure__", None) or ()
    for var, cell in zip(fn.__code__.co_freevars, closure):
        try:
            scope[var] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    absent = object()
    reads = first_reads(fn)
    for name, line in reads.items():
        value = scope.get(name, absent)
        if value is not absent and not allowed(value, name, language, jit_types):
            try:
                first = inspect.getsourcelines(fn)[1]
            except (OSError, TypeError):
                first = 1
            return name, first + line - 1, value
    return None


def refused_name(fn, language, jit_types: tuple[type, ...]) -> str | None:
    """The first global name of ``fn``'s body the compiler would refuse, or None."""
    found = refused_read(fn, language, jit_types)
    return found[0] if found else None


def install(interpreter) -> bool:
    """Wrap ``interpreter.InterpretedFunction.rewrite``; True once installed."""
    import triton.language as language
    from triton.runtime import jit as jit_module

    owner = interpreter.InterpretedFunction
    original = owner.__dict__["rewrite"]
    if getattr(original, "_grader_constexpr_globals", False):
        return True
    # JITCallable is the base of jitted functions from Triton 3.7 on; JITFunction before.
    jit_types = tuple(t for t in (jit_module.JITFunction, getattr(jit_module, "JITCallable", None), owner)
                      if isinstance(t, type))
    verdicts: dict[object, tuple[str, int, object] | None] = {}

    def rewrite(self):
        if os.environ.get("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "0") not in ("1", "true", "True"):
            if self.fn not in verdicts:
                verdicts[self.fn] = refused_read(self.fn, language, jit_types)
            if verdicts[self.fn] is not None:
                name, line, value = verdicts[self.fn]
                error = CompilationError(refusal(name, self.fn.__name__, line, value))
                raise_at(error, self.fn.__code__.co_filename, line)
        return original(self)

    rewrite._grader_constexpr_globals = True
    owner.rewrite = rewrite
    return True
