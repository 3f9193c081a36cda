"""On a GPU: were the calls the judge's clock timed made of the learner's own Triton kernels?

The judge's clock (`grader.timing`) times whatever the learner's process runs between "go" and
"done". A file that runs a correct Triton kernel while it is watched and ``torch.add`` while the
clock runs would be graded on torch's speed (the phase attacks of exercise 1's hostile/ folder;
tools/device/phase_audit.py grades them on a GPU with the grader before and after). So the
learner's process keeps a CUDA activity trace (CUPTI, through torch.profiler) from the first
timed round to the last, every timed round traced and none left out: a sample would need a
trace the file cannot see, and a file sees torch.profiler's state. Its kernels' names must all be the Triton kernels the learner's
file defines, read here from the file's syntax tree (the judge never imports it), and there must
be at least one of them per timed call. A kernel of torch (``at::native::...``), cuBLAS or
cutlass fails the performance check with a sentence.

Why not pygpubench's answer (timing in a compiled extension of the learner's own process, the
results written to an unlinked file): here the clock is already the judge's, in another process;
what only the learner's process can see is which kernels ran, because CUPTI traces the process it
is loaded in. The trace is read there, so a file that patches the runner's reading of it (or
torch.profiler's internals) could still forge the names: a best effort against such a file, said
so in docs/grading.md's guarantees, and what the class grader's static check (`import grader`,
``torch._C``, frames) is for.
"""

from __future__ import annotations

import ast
import tokenize
from pathlib import Path

from grader.failures import GradeFailure


def _decorator_names(node: ast.AST) -> list[str]:
    """'triton.jit', 'jit', 'triton.autotune' ... for one decorator expression."""
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return [".".join(reversed(parts))] if parts else []


def jit_kernel_names(path: str | Path) -> set[str]:
    """The names of the functions the file decorates with ``triton.jit`` (or ``jit``), at any depth."""
    try:
        with tokenize.open(path) as f:
            tree = ast.parse(f.read(), str(path))
    except (OSError, SyntaxError, ValueError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [name for d in node.decorator_list for name in _decorator_names(d)]
            if any(name == "jit" or name.endswith(".jit") for name in decorators):
                names.add(node.name)
    return names


#: What torch's fills are called in a trace (``torch.zeros`` of an accumulator: "at::native::FillFunctor").
FILL = "FillFunctor"


def audit(kernels: dict | None, allowed: set[str], calls: int, *, fills: bool = False) -> GradeFailure | None:
    """A sentence when the traced kernels of ``calls`` timed calls are not all the file's own. With
    ``fills`` (the watch saw the calls fill a tensor, which a spec may allow: an accumulator made by
    ``torch.zeros``), torch's fill kernels are allowed too: a fill computes no answer."""
    if kernels is None:
        return GradeFailure("performance: the grader could not trace the kernels of the timed calls, so it cannot say "
                            "the time is your kernel's")
    if "$error" in kernels:
        return GradeFailure(f"performance: the trace of the timed calls could not be read ({kernels['$error']}), so "
                            "the grader cannot say the time is your kernel's")
    foreign = [name for name in kernels if name not in allowed and not (fills and FILL in name)]
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
