"""What a learner file may contain, read from its source (never run): the honesty check of batch grading.

The judge cannot see *how* the learner's process computed an answer: code there can patch the
watch, hide work in a thread or reach memory through ``ctypes``. What it can do is read the file
first. A learner file for this course is a Triton kernel and a launcher; it needs ``torch``,
``triton``, ``math`` and a few standard modules, and nothing that reaches into the process, the
grader or the system. `findings` lists every line that goes further:

* imports outside `ALLOWED_MODULES` (``threading``, ``multiprocessing``, ``subprocess``, ``ctypes``,
  ``signal``, ``gc``, ``inspect``, ``importlib``, ``numpy``, ``sys``, the grader, the solutions,
  ...), private modules of torch and Triton (``torch._C``, ``torch.utils._python_dispatch``);
  ``os`` only for reading the environment;
* ``__import__``, ``exec``, ``eval``, ``compile``, ``globals``, ``locals``, ``vars``, ``open``,
  ``setattr``/``delattr`` and ``getattr`` with a computed or private name (dynamic attribute
  access is how one reaches what a reader cannot see), ``breakpoint``;
* attributes that reach into frames, objects and memory: ``_getframe``, ``f_back``, ``f_locals``,
  ``__globals__``, ``__dict__``, ``__subclasses__``, ``__builtins__``, ``.numpy()``,
  ``.tolist()``, ``__array__``, ``data_ptr``, ``untyped_storage``, any private ``torch._...``;
* assignments to an attribute of an imported module (patching ``triton`` or ``torch``).

`grade batch` refuses a file with findings (a failed check that names them); `grade exercise`
prints them as a warning that the batch grader will refuse the file. It is a best effort, said
to be so in docs/grading.md: it catches what an honest file never needs, not every way to hide.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ALLOWED_MODULES = {"__future__", "math", "functools", "typing", "dataclasses", "itertools", "collections",
                   "enum", "operator", "numbers", "torch", "triton", "os"}
#: Private or dangerous parts of allowed packages.
FORBIDDEN_MODULE_PREFIXES = ("torch._", "torch.utils._", "torch.multiprocessing", "torch.utils.cpp_extension",
                             "torch.distributed", "triton._", "torch.cuda._")
FORBIDDEN_CALLS = {"__import__", "exec", "eval", "compile", "globals", "locals", "vars", "open",
                   "setattr", "delattr", "breakpoint", "input", "memoryview"}
FORBIDDEN_ATTRIBUTES = {"_getframe", "f_back", "f_locals", "f_globals", "f_code", "tb_frame", "__globals__",
                        "__dict__", "__subclasses__", "__builtins__", "__code__", "__closure__", "__class__",
                        "__bases__", "__mro__", "__loader__", "__spec__", "__reduce__", "__reduce_ex__",
                        "numpy", "tolist", "__array__", "__array_interface__", "__cuda_array_interface__",
                        "data_ptr", "untyped_storage", "_cdata", "set_", "__setattr__", "__getattribute__",
                        "_C", "_dynamo", "_inductor", "_getframe"}
OS_ALLOWED = {"environ", "getenv", "path", "cpu_count"}


@dataclass(frozen=True)
class Finding:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


def _module_allowed(name: str) -> bool:
    root = name.split(".")[0]
    if root not in ALLOWED_MODULES:
        return False
    return not any(name == p.rstrip(".") or name.startswith(p) for p in FORBIDDEN_MODULE_PREFIXES)


def findings(source: str, filename: str = "<learner file>") -> list[Finding]:
    """Every line of ``source`` that an honest learner file does not need (empty: nothing found)."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return [Finding(exc.lineno or 0, f"the file does not parse ({exc.msg})")]
    found: list[Finding] = []
    modules: dict[str, str] = {}  # local name -> module it is bound to

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _module_allowed(alias.name):
                    found.append(Finding(node.lineno, f"imports `{alias.name}`"))
                modules[(alias.asname or alias.name).split(".")[0]] = alias.name.split(".")[0] if not alias.asname else alias.name
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                found.append(Finding(node.lineno, "a relative import"))
            elif not _module_allowed(module):
                found.append(Finding(node.lineno, f"imports from `{module}`"))
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if module == "os" and alias.name not in OS_ALLOWED:
                    found.append(Finding(node.lineno, f"imports `os.{alias.name}`"))
                elif alias.name.startswith("_") or any(full.startswith(p) for p in FORBIDDEN_MODULE_PREFIXES):
                    found.append(Finding(node.lineno, f"imports `{full}`"))
                modules[alias.asname or alias.name] = full
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found.append(Finding(node.lineno, f"calls `{node.func.id}()`"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            # getattr(obj, "plain_name", default) reads one named attribute; anything else is dynamic
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)
                    and not name.value.startswith("_") and name.value not in FORBIDDEN_ATTRIBUTES):
                found.append(Finding(node.lineno, "calls `getattr()` with a computed or private name"))
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__import__", "__loader__", "__spec__"):
            found.append(Finding(node.lineno, f"uses `{node.id}`"))
        elif isinstance(node, ast.Attribute):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            bound = modules.get(root.id) if isinstance(root, ast.Name) else None
            if node.attr in FORBIDDEN_ATTRIBUTES or (node.attr.startswith("__") and node.attr.endswith("__")
                                                    and node.attr not in ("__name__", "__init__", "__doc__")):
                found.append(Finding(node.lineno, f"uses `.{node.attr}`"))
            elif bound == "os" and isinstance(node.value, ast.Name) and node.attr not in OS_ALLOWED:
                found.append(Finding(node.lineno, f"uses `os.{node.attr}`"))
            elif bound is not None and bound.split(".")[0] in ("torch", "triton") and node.attr.startswith("_"):
                found.append(Finding(node.lineno, f"uses the private `{node.attr}` of {bound.split('.')[0]}"))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Attribute):
                        root = sub
                        while isinstance(root, ast.Attribute):
                            root = root.value
                        if isinstance(root, ast.Name) and root.id in modules:
                            found.append(Finding(node.lineno, f"assigns to `{ast.unparse(sub)}` (patches a module)"))
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            pass
    unique = {(f.line, f.what): f for f in found}
    return sorted(unique.values(), key=lambda f: (f.line, f.what))


def read_source(path: Path) -> str:
    """The file's text, decoded the way Python decodes a source file (PEP 263 coding lines too)."""
    import tokenize

    with tokenize.open(path) as f:
        return f.read()


def sentence(found: list[Finding], *, strict: bool) -> str:
    shown = "; ".join(str(f) for f in found[:6]) + (f"; and {len(found) - 6} more" if len(found) > 6 else "")
    if strict:
        return (f"the class grader refuses this file: {shown}. A learner file needs only torch, triton and "
                "math: the kernel and its launcher")
    return (f"`grade batch` (class grading) would refuse this file: {shown}. A learner file needs only "
            "torch, triton and math")
