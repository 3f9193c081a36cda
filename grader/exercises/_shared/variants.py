"""A wrong variant as the solution with a few lines changed.

Most known-wrong files of the course are the solution with one mistake in it. Written out in full,
each was a copy of a 100- to 450-line solution whose difference a reader had to find with `diff`;
written as a patch, the variant names its mistake in the lines it changes:

    from grader.exercises._shared.variants import solution_with

    _wrong = solution_with("ex08_decode", (
        "num_splits = min(triton.cdiv(waves, num_kv), max_splits)",
        "num_splits = triton.cdiv(waves, num_kv)",  # WRONG: no cap
    ))
    decode_attention = _wrong.decode_attention

`solution_with` reads the solution's source (through its module, so the sandbox's rule for course
variants is the one that applies: they, and only they, see solutions/), replaces each old text by its
new one, and runs the result as a module of its own. Its kernels and launchers refer to each other as
in the solution, so a changed kernel is launched by the solution's own launcher. Triton reads a
kernel's source to compile it (and the interpreter to rewrite it): the patched source is registered
with `linecache` under a name that says what it is.
"""

from __future__ import annotations

import importlib
import linecache
import sys
import types


def solution_with(stem: str, *changes: tuple) -> types.ModuleType:
    """The module ``solutions.<stem>`` with each ``(old, new)`` text replaced: ``old`` must occur once, or
    ``times`` times for ``(old, new, times)`` (the same mistake made in several places)."""
    solution = importlib.import_module(f"solutions.{stem}")
    with open(solution.__file__, encoding="utf-8") as f:
        source = f.read()
    for old, new, *times in changes:
        found, wanted = source.count(old), (times or [1])[0]
        if found != wanted:
            raise ValueError(f"solutions/{stem}.py holds {old!r} {found} times, not {wanted}: the variant's patch "
                             "no longer fits the solution; write its change against the solution as it is now")
        source = source.replace(old, new)
    name = f"solutions.{stem}__with_{len(changes)}_changes_{abs(hash(changes)):x}"
    filename = f"<solutions/{stem}.py with a wrong variant's changes {abs(hash(changes)):x}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = types.ModuleType(name, solution.__doc__)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module
