"""Loops in Triton's interpreter, made to behave as they do when Triton compiles a kernel.

Two differences fail kernels that are right on a GPU:

* **Loop bounds computed in the kernel** (Triton 3.6). The interpreter turns a loop bound into a
  Python int with ``int(self.handle.data)``; a program id or a kernel argument is a one-element
  array there, and NumPy 2.4 made ``int()`` of a one-element array a TypeError ("only
  0-dimensional arrays can be converted to Python scalars"). So
  ``for row in tl.range(pid, n_rows, tl.num_programs(0))`` fails in Triton 3.6's interpreter.
  Triton 3.9 squeezes the array first; `fix_loop_bounds` does the same for older interpreters,
  only where their source shows the old spelling.
* **Loop variables.** Compiled, ``for r in range(...)`` and ``for r in tl.range(...)`` give a
  Triton scalar (int32, or int64 when a bound is int64), so ``r.to(tl.int64)`` works (and is how
  a kernel keeps ``r * stride`` from overflowing 32 bits). The interpreter runs a Python
  ``range`` and gives a Python int: ``'int' object has no attribute 'to'``. `fix_loop_variables`
  rewrites, in each kernel's syntax tree, ``for v in range(...)`` and ``for v in <module>.range(...)``
  to iterate over Triton scalars. ``tl.static_range`` is left alone: compiled, its variable is a
  compile-time constant, which a Python int already is.
"""

from __future__ import annotations

import ast

import numpy as np

#: The name the rewritten loops call; the interpreter puts its own module globals (this one among
#: them) into each kernel's globals when it compiles the rewritten kernel.
LOOP_VALUES = "_interpreter_loop_values"


def fix_loop_bounds(interpreter) -> bool:
    """Let Triton 3.6's interpreter use loop bounds computed in the kernel. True if patched."""
    import inspect

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


def _is_range(func: ast.expr) -> bool:
    """``range`` or ``<anything>.range`` (``tl.range``, ``triton.language.range``)."""
    return (isinstance(func, ast.Name) and func.id == "range") or (isinstance(func, ast.Attribute) and func.attr == "range")


def loop_values(interpreter, range_fn, *args, **kwargs):
    """Iterate ``range_fn(*args, **kwargs)`` as Triton scalars of the type a compiled loop uses."""
    tl = interpreter.tl
    bounds = [*args, kwargs.get("step")]
    wide = any(
        (isinstance(b, tl.core.tensor) and b.dtype in (tl.int64, tl.uint64))
        or (isinstance(b, int) and not isinstance(b, bool) and not -2**31 <= b < 2**31)
        for b in bounds
    )
    dtype, np_dtype = (tl.int64, np.int64) if wide else (tl.int32, np.int32)
    for value in range_fn(*args, **kwargs):
        yield tl.core.tensor(interpreter.TensorHandle(np.array([value], dtype=np_dtype), dtype), dtype)


def fix_loop_variables(interpreter) -> bool:
    """Make ``range``/``tl.range`` loop variables Triton scalars in interpreted kernels. True if patched."""
    rewriter = getattr(interpreter, "FunctionRewriter", None)
    transformer = getattr(rewriter, "ast_transformer", None)
    if transformer is None or getattr(transformer, "_course_loop_variables", False):
        return False
    base = type(transformer)

    class LoopVariables(base):
        _course_loop_variables = True

        def visit_For(self, node):
            node = self.generic_visit(node)
            call = node.iter
            if isinstance(call, ast.Call) and _is_range(call.func):
                node.iter = ast.copy_location(ast.Call(
                    func=ast.Name(id=LOOP_VALUES, ctx=ast.Load()),
                    args=[call.func, *call.args], keywords=call.keywords), call)
            return node

    setattr(interpreter, LOOP_VALUES, lambda range_fn, *args, **kwargs: loop_values(interpreter, range_fn, *args, **kwargs))
    rewriter.ast_transformer = LoopVariables()
    return True
