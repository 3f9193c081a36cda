"""`grader.commands.source_allowlist` is an allow-list: what a kernel file needs passes, everything else is named.

* every solution, stub and natural file of the course has no finding (the class grader would
  otherwise refuse correct code), and neither do the learner-style forms below (a module-level
  ``tl.constexpr``, ``math.log2`` at module level, a local helper, type hints, f-strings, a cache on
  ``self``);
* each way around a deny-list is named, in one sentence with its line: a builtin read under an alias,
  through ``getattr``, ``vars`` or ``globals``; attribute chains past their first link
  (``os.path.sys``, ``t = torch; t._C``, ``tl.core.builtins``); a module passed around as a value;
  private and dunder attributes; dynamic attribute access;
* no attribute of an allowed module that is another, system-reaching module passes: checked against
  the installed torch, Triton and standard library, so a new release that re-exports ``sys`` or
  ``subprocess`` somewhere is caught here.
"""

from __future__ import annotations

import inspect
import types

import pytest

from grader import catalogue
from grader.commands import source_allowlist
from grader.learner import sandbox
from tests.grading import ROOT

COURSE_FILES = sorted([*(ROOT / "solutions").glob("*.py"), *(ROOT / "exercises").glob("*.py"),
                       *[p for e in catalogue.EXERCISES for p in sorted(e.natural_dir.glob("*.py"))]])


@pytest.mark.parametrize("path", COURSE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_course_file_passes(path):
    found = source_allowlist.findings(source_allowlist.read_source(path))
    if sandbox.course_variant(ROOT, path):
        # A natural file may import the solution it differs from (the sandbox shows solutions/ to the
        # course's own variants only); nothing else of it may be flagged.
        found = [f for f in found if not f.what.split(" imports ")[-1].startswith("`solutions.")]
    assert found == []


LEARNER_STYLE = {
    "module-level constexpr and math": """
import math
import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))
BLOCKS: tuple[int, ...] = (256, 512)
""",
    "helper, hints and f-strings": """
from __future__ import annotations
import functools
import os
import torch
import triton

@functools.lru_cache(maxsize=None)
def sm_count(index: int) -> int:
    props = torch.cuda.get_device_properties(index)
    return getattr(props, "multi_processor_count", 1)

def check(x: torch.Tensor) -> None:
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got {x.dim()} dimensions of {x.dtype}")
    if os.environ.get("DEBUG"):
        print(f"{x.shape=}", os.path.join("a", "b"), triton.__version__)
""",
    "a cache on the file's own object": """
import triton

class Launcher:
    _table = {}

    def __init__(self):
        self._cache = {}

    def config(self, n):
        Launcher._table[n] = self._cache.setdefault(n, triton.next_power_of_2(n))
        return self._cache[n]

_LAUNCHER = Launcher()
_LAUNCHER._cache.clear()

def registers(compiled):
    compiled._init_handles()
    return compiled.n_regs, triton.runtime.driver.active.utils.get_device_properties(0)
""",
    "torch and triton's public API": """
import torch
import torch.nn.functional as F
import triton.language as tl
from triton.language.extra import libdevice

def reference(x):
    return F.softmax(x.float(), dim=-1).to(torch.float16), torch.finfo(x.dtype).max, tl.math.exp2, libdevice.pow
""",
}


@pytest.mark.parametrize("source", LEARNER_STYLE.values(), ids=LEARNER_STYLE.keys())
def test_learner_style_code_passes(source):
    assert source_allowlist.findings(source) == []


#: (a line of code, what its finding must say); the import lines the snippets need come first.
PRELUDE = "import os\nimport torch\nimport triton\nimport triton.language as tl\nfrom os import path\n"
REFUSED = {
    "alias of exec": ("_run = exec", "`_run = exec` reads the builtin `exec`, which a kernel file never needs"),
    "alias of open": ("_open = open", "reads the builtin `open`"),
    "getattr on __builtins__": ("_run = getattr(__builtins__, 'ex' + 'ec')", "calls `getattr()` with a computed name"),
    "vars": ("names = vars(os)", "calls `vars()`"),
    "globals": ("b = globals()['__builtins__']", "calls `globals()`"),
    "__builtins__": ("b = __builtins__", "reads `__builtins__`"),
    "__import__": ("m = __import__('importlib')", "reads `__import__`"),
    "a builtin's name bound": ("def run(source, exec=exec):\n    return exec(source)", "binds `exec`"),
    "os.path.sys": ("modules = os.path.sys.modules", "uses `.sys` (`os.path.sys.modules`), a way to the module `sys`"),
    "os.path.os": ("os.path.os.fork()", "uses `.os` (`os.path.os.fork`)"),
    "from os import path, then path.os": ("path.os.system('true')", "a way to the module `os`"),
    "os.fork": ("os.fork()", "uses `.fork` (`os.fork`)"),
    "os beyond the environment": ("os.listdir('solutions')",
                                  "uses `.listdir` (`os.listdir`), a kernel file reads only"),
    "torch._C through an alias": ("t = torch\nwith t._C._DisableTorchDispatch():\n    pass",
                                  "uses `._C` (`torch._C._DisableTorchDispatch`), private to `torch`"),
    "torch.sys": ("torch.sys.modules", "a way to the module `sys`"),
    "torch.utils": ("torch.utils.cpp_extension.load_inline", "uses `.utils` (`torch.utils.cpp_extension.load_inline`)"),
    "torch.hub": ("torch.hub.load('solutions', 'x', source='local')", "uses `.hub`"),
    "torch.load": ("torch.load('reference.pt')", "uses `.load` (`torch.load`)"),
    "tl.core.builtins": ("tl.core.builtins.exec('1')", "a way to the module `builtins`"),
    "triton.testing.subprocess": ("triton.testing.subprocess.run(['true'])", "a way to the module `subprocess`"),
    "triton's runtime": ("triton.runtime.interpreter.InterpretedFunction", "not its compiler or runtime"),
    "triton.knobs": ("triton.knobs.runtime.launch_enter_hook", "not its compiler or runtime"),
    "importlib": ("import importlib\nimportlib.import_module('solutions.ex08_decode')", "imports `importlib`"),
    "a module as a value": ("mods = [torch]\nmods[0]._C", "passes the module `torch` around as a value"),
    "a module as an argument": ("def reach(m):\n    return m\nreach(os)", "passes the module `os` around as a value"),
    "private on another object": ("x = torch.ones(1)\nx._base", "uses `._base`, a private attribute of an object"),
    "private after the file's own": ("class A:\n    def f(self):\n        return self.holder._secret",
                                     "uses `._secret`"),
    "getattr for a private name": ("getattr(torch, '_C')", "calls `getattr()` for `_C`, private to `torch`"),
    "getattr as a value": ("f = getattr\nf(torch, 'x')", "reads the builtin `getattr` without calling it"),
    "__dict__": ("torch.__dict__", "uses `.__dict__`"),
    "__class__.__mro__": ("(1).__class__.__mro__", "uses `.__class__`"),
    "__subclasses__": ("object.__subclasses__()", "uses `.__subclasses__`"),
    "mro()": ("torch.Tensor.mro()", "uses `.mro`"),
    "operator.attrgetter": ("import operator\noperator.attrgetter('_C')", "uses `.attrgetter`"),
    "typing.get_type_hints": ("import typing\ntyping.get_type_hints(print)", "uses `.get_type_hints`"),
    "a pattern reads an attribute": ("match 1:\n    case object(_C=c):\n        pass", "matches the attribute `_C`"),
    "patching a module": ("tl.store = print", "assigns to `tl.store` (patches a module)"),
    "patching through an alias": ("t = torch\nt.add = print", "assigns to `t.add` (patches a module)"),
    "reading solutions/": ("import solutions.ex08_decode", "imports `solutions.ex08_decode`"),
    "a relative import": ("from . import reference", "is a relative import"),
    "__torch_function__": ("class T(torch.Tensor):\n    def __torch_function__(cls, *a):\n        pass",
                           "defines `__torch_function__`"),
    "a data_ptr of the file's own": ("class T:\n    def data_ptr(self):\n        return 0",
                                     "defines `data_ptr`, which Triton calls inside a launch"),
}


@pytest.mark.parametrize("code, said", REFUSED.values(), ids=REFUSED.keys())
def test_each_way_around_a_deny_list_is_named(code, said):
    found = source_allowlist.findings(PRELUDE + code + "\n")
    named = [str(f) for f in found]
    assert any(said in f for f in named), named
    line = PRELUDE.count("\n") + 1
    assert all(f.line >= line for f in found), named  # the prelude itself is allowed


def test_a_finding_is_one_sentence_with_its_line():
    found = source_allowlist.findings("import torch\n\n_run = exec\n")
    assert [str(f) for f in found] == [
        "line 3: `_run = exec` reads the builtin `exec`, which a kernel file never needs"]


#: Modules a re-export may reach without reaching the system: pure functions and data types.
HARMLESS = {"math", "functools", "itertools", "collections", "dataclasses", "operator", "numbers", "enum", "typing",
            "statistics", "abc", "re", "copy", "warnings", "textwrap", "contextlib", "keyword", "types", "uuid",
            "platform", "stat", "torch", "triton", "sympy", "typing_extensions",
            "posixpath", "ntpath"}  # os.path: held to its own allow-list (MODULE_RULES["os"])


def _allowed_modules():
    import collections
    import dataclasses
    import enum
    import functools
    import os
    import typing

    import torch
    import torch.nn.functional
    import triton
    import triton.language
    import triton.testing

    return [(torch, "torch"), (torch.cuda, "torch.cuda"), (torch.nn.functional, "torch.nn.functional"),
            (torch.autograd, "torch.autograd"), (triton, "triton"), (triton.language, "triton.language"),
            (triton.language.core, "triton.language.core"), (triton.testing, "triton.testing"),
            (os, "os"), (os.path, "os.path"), (typing, "typing"), (dataclasses, "dataclasses"), (enum, "enum"),
            (collections, "collections"), (functools, "functools")]


@pytest.mark.parametrize("module, chain", _allowed_modules(), ids=[chain for _, chain in _allowed_modules()])
def test_no_allowed_module_leads_to_a_system_module(module, chain):
    leaks = []
    for name in dir(module):
        try:
            value = inspect.getattr_static(module, name)
        except AttributeError:
            continue
        if not isinstance(value, types.ModuleType):
            continue
        top = value.__name__.split(".")[0]
        if top in HARMLESS or name.startswith("_"):
            continue
        if source_allowlist.chain_refusal(f"{chain}.{name}") is None:
            leaks.append(f"{chain}.{name} ({value.__name__})")
    assert leaks == []
