"""On a GPU: were the calls the judge's clock timed made of the learner's own Triton kernels?

The learner's process keeps a CUDA activity trace over every counted round of the clock
(`grader.learner.kernel_trace`) and sends back the kernels it saw, by name. Their names must all be
Triton kernels the learner's file defines, read here from the file's syntax tree (the judge never
imports it), with at least one launch of them per timed call. Besides them only two kinds of kernel
compute no answer and are let through: torch's fills (an accumulator made by ``torch.zeros``, which
the checks allow where a spec does) and, when the learner's process copied an output into the
judge's slot, that copy. A kernel of torch (``at::native::...``), cuBLAS or cutlass fails the
performance check with a sentence: the time would be theirs.

What the trace costs on an H200, and the file it catches, are in docs/measurements/h200-phase-audit.json.
"""

from __future__ import annotations

import ast
import tokenize
from pathlib import Path

from grader.wire.failures import GradeFailure

#: What torch's fills are called in a trace (``torch.zeros`` of an accumulator: "at::native::FillFunctor").
FILL = "FillFunctor"
#: What the copy into the judge's slot is called ("at::native::direct_copy_kernel_cuda" and its kin).
COPY = "copy_kernel"


def _dotted(node: ast.AST) -> str:
    """'triton.jit', 'jit', 'triton.autotune' ... for a decorator or a called name."""
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _is_jit(name: str) -> bool:
    return name == "jit" or name.endswith(".jit")


def jit_kernel_names(path: str | Path) -> set[str]:
    """The names of the functions the file makes Triton kernels, at any depth: decorated with
    ``triton.jit`` (or ``jit``), or passed to it (``kernel = triton.jit(add)``)."""
    try:
        with tokenize.open(path) as f:
            tree = ast.parse(f.read(), str(path))
    except (OSError, SyntaxError, ValueError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_is_jit(_dotted(d)) for d in node.decorator_list):
                names.add(node.name)
        elif isinstance(node, ast.Call) and _is_jit(_dotted(node.func)):
            names.update(arg.id for arg in node.args if isinstance(arg, ast.Name))
    return names


def audit(kernels: dict | None, allowed: set[str], calls: int, *, copied: bool = False) -> GradeFailure | None:
    """A sentence when the traced kernels of ``calls`` timed calls are not all the file's own
    (``allowed``), None when they are. ``copied``: the learner's process copied an output into the
    judge's slot, so one copy kernel is the grader's own."""
    if kernels is None:
        return GradeFailure("performance: the grader could not trace the kernels of the timed calls, so it cannot say "
                            "the time is your kernel's")
    if "$error" in kernels:
        return GradeFailure(f"performance: the trace of the timed calls could not be read ({kernels['$error']}), so "
                            "the grader cannot say the time is your kernel's")
    foreign = [name for name in kernels
               if name not in allowed and FILL not in name and not (copied and COPY in name)]
    if foreign:
        shown = ", ".join(f"`{name[:120]}`" for name in foreign[:3])
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        return GradeFailure(
            f"performance: while the grader's clock ran, the GPU ran kernels that are not your file's Triton kernels "
            f"({shown}{more}): the time would be theirs, not your kernel's. Every timed call must compute its answer "
            "with your own `@triton.jit` kernels, as the checks that compared your outputs saw it do")
    own = sum(count for name, count in kernels.items() if name in allowed)
    if own < calls:
        return GradeFailure(
            f"performance: the trace of the timed calls shows {own} launches of your kernels for {calls} calls: "
            "every call must launch your kernel (was the work done elsewhere, or the trace stopped?)")
    return None
