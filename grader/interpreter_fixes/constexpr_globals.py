"""The compiler's rule on global names, held in the interpreter too.

A compiled Triton kernel may read a module-level name only if it is a ``tl.constexpr``, a module, a
jitted function, a dtype, ``None`` or one of Triton's own objects: ``LOG2E = 1.4426950408889634``
read inside a kernel does not compile (``NameError: Cannot access global variable LOG2E from within
@jit'ed function``, Triton 3.6 to 3.9). Triton's interpreter runs the kernel as Python, where any
global can be read, so such a file passed on a laptop and failed on a GPU.

`install` wraps ``InterpretedFunction.rewrite``, which the interpreter calls before it first runs a
kernel or a jitted helper: the names the function's body reads are looked up as the compiler's
``global_lookup`` does (``CodeGenerator._define_name_lookup``), and a name it would refuse raises
what a GPU reports, so the grader's message is the same on both machines.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
from types import ModuleType

#: What the fix relies on: the interpreter's entry point, and the compiler rule it copies.
RELIED_ON = (("InterpretedFunction", "rewrite"),)
RULE = (("CodeGenerator", "_define_name_lookup"), ("CodeGenerator", "_is_constexpr_global"))


class CompilationError(Exception):
    """Named as Triton's own, so the report reads "your kernel did not compile", as on a GPU."""


def refusal(name: str) -> str:
    """Triton's sentence, as ``repr(NameError(...))`` ends a compilation error on a GPU."""
    return repr(NameError(
        f"Cannot access global variable {name} from within @jit'ed function. Triton kernels can only access "
        "global variables that are instanstiated as constexpr (`x = triton.language.constexpr(42)`). Note that "
        "this is different from annotating a variable as constexpr (`x: triton.language.constexpr = 42`), which "
        "is not supported.  Alternatively, set the envvar TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1, but we do not "
        "promise to support this forever."))


def names_read(fn) -> list[str]:
    """The names the body of ``fn`` reads and does not bind itself, each once."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None:
        return []
    bound = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    bound |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
    read: list[str] = []
    for statement in node.body:  # not the decorators, defaults or annotations: the compiler allows those
        for sub in ast.walk(statement):
            if isinstance(sub, ast.Name):
                if isinstance(sub.ctx, ast.Load):
                    if sub.id not in read:
                        read.append(sub.id)
                else:
                    bound.add(sub.id)
    return [name for name in read if name not in bound]


@functools.cache
def builtin_names() -> frozenset[str]:
    """The names the compiler resolves itself (``CodeGenerator.builtin_namespace``: ``range``, ``min``...)."""
    from triton.compiler.code_generator import CodeGenerator

    return frozenset(CodeGenerator.builtin_namespace)


def allowed(value, name: str, language, jit_types: tuple[type, ...]) -> bool:
    """``global_lookup``'s test, term by term (Triton 3.6 to 3.9)."""
    module = getattr(value, "__module__", None) or ""
    return (name in builtin_names()
            or value is None
            or type(value) is ModuleType
            or isinstance(value, jit_types)
            or bool(getattr(value, "__triton_builtin__", False))
            or bool(getattr(value, "__triton_aggregate__", False))
            or module.startswith("triton.language")
            or module.startswith("triton.experimental.gluon.language")
            or isinstance(value, (language.constexpr, language.dtype))
            or (isinstance(value, tuple) and hasattr(value, "_fields")))


def refused_name(fn, language, jit_types: tuple[type, ...]) -> str | None:
    """The first global name of ``fn``'s body the compiler would refuse, or None."""
    scope = dict(getattr(fn, "__globals__", {}))
    closure = getattr(fn, "__closure__", None) or ()
    for var, cell in zip(fn.__code__.co_freevars, closure):
        try:
            scope[var] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    absent = object()
    for name in names_read(fn):
        value = scope.get(name, absent)
        if value is not absent and not allowed(value, name, language, jit_types):
            return name
    return None


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
    verdicts: dict[object, str | None] = {}

    def rewrite(self):
        if os.environ.get("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "0") not in ("1", "true", "True"):
            if self.fn not in verdicts:
                verdicts[self.fn] = refused_name(self.fn, language, jit_types)
            if verdicts[self.fn] is not None:
                raise CompilationError(refusal(verdicts[self.fn]))
        return original(self)

    rewrite._grader_constexpr_globals = True
    owner.rewrite = rewrite
    return True
