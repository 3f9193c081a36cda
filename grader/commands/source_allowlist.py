"""What a learner file may contain, read from its source (never run): the honesty check of batch grading.

The judge cannot see *how* the learner's process computed an answer: code there can patch the
watch, hide work in a thread or reach memory through ``ctypes``. What it can do is read the file
first. A learner file for this course is a Triton kernel and a launcher: it needs ``torch``'s public
tensor API, ``triton`` and ``triton.language``, ``math`` and a few standard modules, and nothing that
reaches into the process, the grader or the system. `findings` is an allow-list of exactly that,
and names every line that goes further, in one sentence each
("line 12: `_run = exec` reads the builtin `exec`, which a kernel file never needs"):

* **imports**: the modules of `ALLOWED_MODULES` only, and of those only what the attribute rules
  below allow (``from os import fork`` is ``os.fork``);
* **builtins**: only those of `ALLOWED_BUILTINS`, however they are reached (``_run = exec`` reads
  ``exec`` as surely as ``exec(...)`` calls it); a file may not bind the name of another builtin,
  nor read ``__builtins__``, ``__import__`` or the module's other dunder names; ``getattr`` only
  called with a literal public name;
* **modules as values**: an imported module (or an alias of one, ``t = torch``) may be the root of an
  attribute chain and nothing else: ``[torch][0]`` or ``f(os)`` would hide what it reaches;
* **attribute chains**, every link of them: a chain rooted at a module is held to that module's
  allow-list (`MODULE_RULES`: ``os`` only for the environment and paths, ``triton``'s launch API,
  ``torch`` without the parts that load code, files or processes), and no link may reach a module
  of the standard library that reaches the system (``os.path.sys``, ``tl.core.builtins``,
  ``triton.testing.subprocess``); on any object, a private ``_name`` is allowed only on the file's
  own classes and objects (``self._cache``, ``MyClass._table``) and on `COURSE_PRIVATE`, a dunder
  only if it is in `ALLOWED_DUNDERS`, and the attributes of `FORBIDDEN_ATTRIBUTES` (frames, memory,
  host copies: ``.numpy()``, ``.tolist()``, ``data_ptr``) never;
* **patching**: no assignment to an attribute of a module; no ``__torch_dispatch__`` or
  ``__torch_function__`` defined.

`grade batch` refuses a file with findings (a failed check that names them), as does
``grade exercise --strict``; plain `grade exercise` prints them as a warning. It reads the source
only: what a file computes at run time where the torch-op watch does not look stays a best effort,
said to be one in docs/grading.md.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import functools
from dataclasses import dataclass
from pathlib import Path

#: Modules a learner file may import (their parts as `MODULE_RULES` allows).
ALLOWED_MODULES = {"__future__", "math", "functools", "typing", "dataclasses", "itertools", "collections",
                   "enum", "operator", "numbers", "torch", "triton", "os"}

#: The builtins a kernel file and its launcher need; every exception class is allowed too.
ALLOWED_BUILTINS = {
    "abs", "all", "any", "bin", "bool", "bytearray", "bytes", "callable", "chr", "classmethod", "complex", "dict",
    "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr", "hasattr", "hash", "hex", "id",
    "input", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "oct",
    "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "set", "slice", "sorted", "ascii",
    "staticmethod", "str", "sum", "super", "tuple", "type", "zip", "NotImplemented", "Ellipsis", "True", "False",
    "None",
} | {name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}
#: Module-level dunder names a file may read.
ALLOWED_DUNDER_NAMES = {"__name__", "__doc__", "__file__", "__annotations__"}
#: Dunder attributes a file may use (``super().__init__()``, ``fn.__name__``, ``triton.__version__``).
ALLOWED_DUNDERS = {"__name__", "__qualname__", "__init__", "__doc__", "__version__", "__post_init__"}
#: Private attributes of objects the course's own files use: Triton's ``CompiledKernel._init_handles()``
#: loads the binary so that ``n_regs`` is filled in (exercise 4's occupancy, on a GPU).
COURSE_PRIVATE = {"_init_handles"}
#: Attributes never needed on any object: frames, code, memory, host copies, the module system.
FORBIDDEN_ATTRIBUTES = {
    "_getframe", "f_back", "f_locals", "f_globals", "f_code", "f_builtins", "tb_frame", "gi_frame", "cr_frame",
    "mro", "numpy", "tolist", "data_ptr", "untyped_storage", "storage", "set_", "_cdata", "modules",
    "import_module", "load_library", "load_inline", "system", "popen", "fork", "forkpty", "kill", "killpg",
    "spawnv", "execv", "execve", "execvp", "dlopen", "attrgetter", "methodcaller", "get_type_hints", "exec", "eval",
}
#: Modules that reach the process, the system or other code: no attribute link may name one
#: (``os.path.sys``, ``torch.inspect``, ``tl.core.builtins``), whatever object it is read on.
SYSTEM_MODULES = {
    "os", "posix", "nt", "sys", "builtins", "bltns", "importlib", "inspect", "ctypes", "subprocess", "threading",
    "_thread", "multiprocessing", "concurrent", "asyncio", "gc", "signal", "socket", "shutil", "pathlib", "io",
    "pickle", "marshal", "weakref", "traceback", "linecache", "runpy", "pkgutil", "zipimport", "codeop", "pdb",
    "dis", "mmap", "resource", "fcntl", "pty", "tempfile", "glob", "atexit", "faulthandler", "tracemalloc",
    "sysconfig", "shlex", "copyreg", "shelve", "numpy", "np", "pynvml", "genericpath", "_sys",
}


@dataclass(frozen=True)
class ModuleRule:
    """What a chain rooted at one module may name: ``allowed`` prefixes (``()``: any public name),
    ``denied`` prefixes, and the reason a refused chain is given."""

    allowed: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()
    reason: str = "a part of it a kernel file never needs"


#: Allow-lists per module, as dotted prefixes after the module's name.
MODULE_RULES = {
    "os": ModuleRule(
        allowed=("environ", "getenv", "cpu_count", "sep", "path.join", "path.dirname", "path.basename",
                 "path.exists", "path.isfile", "path.isdir", "path.splitext", "path.split", "path.abspath"),
        reason="a kernel file reads only the environment and paths (`os.environ`, `os.getenv`, `os.path.join`...)"),
    "triton": ModuleRule(
        allowed=("jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "constexpr_function",
                 "language", "testing",
                 "runtime.driver.active", "tools.tensor_descriptor", "__version__", "OutOfResources",
                 "CompilationError", "TritonError"),
        reason="a kernel file uses Triton's kernels, launches and `triton.language`, not its compiler or runtime"),
    "torch": ModuleRule(
        denied=("load", "save", "from_file", "from_numpy", "compile", "cuda.jiterator", "cuda.memory._",
                "frombuffer", "set_default_tensor_type"),
        reason="a part of torch that loads code or files or computes outside torch's ops, which a kernel file "
               "never needs"),
    "typing": ModuleRule(denied=("get_type_hints", "ForwardRef"), reason="which evaluates strings as code"),
    "operator": ModuleRule(denied=("attrgetter", "methodcaller"),
                           reason="dynamic attribute access hides what it reaches"),
}
#: torch's own submodules a kernel file may reach (the others load code, processes or files:
#: ``torch.utils``, ``torch.hub``, ``torch.package``, ``torch.jit``, ``torch.multiprocessing``...).
TORCH_SUBMODULES = {"cuda", "nn", "autograd", "testing", "linalg", "fft", "special", "types", "functional",
                    "random", "amp", "distributions", "nested", "masked", "sparse", "version", "torch_version",
                    "cpu", "accelerator", "return_types", "quasirandom", "backends"}
#: torch's submodules as of torch 2.x, for a torch whose folder cannot be listed here.
TORCH_KNOWN_SUBMODULES = {"ao", "compiler", "contrib", "distributed", "export", "futures", "fx", "hub", "jit",
                          "library", "monitor", "mps", "mtia", "multiprocessing", "nativert", "numa", "onnx", "optim",
                          "overrides", "package", "profiler", "quantization", "serialization", "signal", "storage",
                          "utils", "xpu"} | TORCH_SUBMODULES
KERNEL_FILE = "which a kernel file never needs"
#: Methods Triton calls on a kernel's tensor arguments inside a launch: a class of the file's own that
#: defines one would run its code there.
TENSOR_ENTRY_POINTS = {"data_ptr", "untyped_storage", "storage_offset", "element_size", "new_empty"}


@dataclass(frozen=True)
class Finding:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


@functools.cache
def package_submodules(package: str) -> frozenset[str]:
    """The submodules of an installed top-level package, read from its folder (never imported)."""
    try:
        spec = importlib.util.find_spec(package)  # a top-level name: finds, does not import
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    names = set()
    for folder in map(Path, folders):
        for entry in folder.iterdir() if folder.is_dir() else ():
            if entry.is_dir() and (entry / "__init__.py").exists():
                names.add(entry.name)
            elif entry.suffix in (".py", ".so", ".pyd"):
                names.add(entry.name.split(".")[0])
    return frozenset(names)


def own_submodule(root: str, parents: list[str], name: str) -> bool:
    """Is ``root.<parents>.<name>`` a module of the installed package ``root`` itself (``torch.types``)?"""
    if root == "os":
        return not parents and name == "path"
    if name not in package_submodules(root) and not parents:
        return False
    try:
        spec = importlib.util.find_spec(root)
    except (ImportError, ValueError):
        return False
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        base = Path(folder).joinpath(*parents)
        if (base / name / "__init__.py").exists() or (base / f"{name}.py").exists():
            return True
    return False


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def attribute_refusal(name: str) -> str | None:
    """Why ``obj.<name>`` is refused on any object (not the file's own), or None."""
    if _dunder(name):
        if name in ALLOWED_DUNDERS:
            return None
        return "a dunder attribute: dynamic attribute access hides what it reaches"
    if name in FORBIDDEN_ATTRIBUTES:
        return KERNEL_FILE
    if name in SYSTEM_MODULES:
        return f"a way to the module `{name}`, {KERNEL_FILE}"
    if _private(name) and name not in COURSE_PRIVATE:
        return "a private attribute of an object the file does not define"
    return None


def chain_refusal(chain: str) -> str | None:
    """Why the dotted ``chain`` rooted at a module (``torch.utils._python_dispatch``) is refused, or None."""
    root, *links = chain.split(".")
    if root not in ALLOWED_MODULES:
        return None  # its import is named already
    rule = MODULE_RULES.get(root, ModuleRule())
    path = ".".join(links)
    for index, link in enumerate(links):
        if _dunder(link) and link not in ALLOWED_DUNDERS:
            return "a dunder attribute: dynamic attribute access hides what it reaches"
        if _private(link):
            return f"private to `{root}`"
        if link in FORBIDDEN_ATTRIBUTES:
            return KERNEL_FILE
        if link in SYSTEM_MODULES and not own_submodule(root, links[:index], link):
            return f"a way to the module `{link}`, {KERNEL_FILE}"
    if any(path == d or path.startswith(d + ".") or (d.endswith("_") and path.startswith(d)) for d in rule.denied):
        return rule.reason
    if rule.allowed and path and not any(path == a or path.startswith(a + ".") for a in rule.allowed):
        if not any(a.startswith(path + ".") for a in rule.allowed):  # `import os.path` names a prefix
            return rule.reason
    if root == "torch" and links:
        own = package_submodules("torch") or TORCH_KNOWN_SUBMODULES
        if links[0] in own and links[0] not in TORCH_SUBMODULES:
            return rule.reason
    return None


class _Checker:
    def __init__(self, tree: ast.Module, source: str):
        self.tree = tree
        self.lines = source.splitlines()
        self.found: list[Finding] = []
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        #: local name -> dotted chain it stands for (``tl`` -> ``triton.language``, ``t = torch`` -> ``torch``)
        self.chains: dict[str, str] = {}
        #: names bound to a module (not to one of its functions): these may only root an attribute chain
        self.module_names: set[str] = set()
        self.bound = self._bound_names()
        self.own_objects = self._own_objects()

    # --- what the file binds -----------------------------------------------------------------------------

    def _bound_names(self) -> set[str]:
        bound: set[str] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                bound.add(node.name)
        return bound

    def _own_objects(self) -> set[str]:
        """Names whose private attributes are the file's own: its classes and functions, the first
        parameter of its methods (``self``, ``cls``) and the names it binds to instances of its classes
        (``_STATE = _State()``)."""
        own: set[str] = set()
        classes = {node.name for node in ast.walk(self.tree) if isinstance(node, ast.ClassDef)}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.args.args:
                        own.add(item.args.args[0].arg)
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in classes):
                own |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        return own - set(self.chains)

    # --- findings ----------------------------------------------------------------------------------------

    def _code(self, node: ast.AST) -> str:
        line = self.lines[node.lineno - 1].strip() if 0 < node.lineno <= len(self.lines) else ""
        return line if len(line) <= 60 else line[:57] + "..."

    def add(self, node: ast.AST, what: str) -> None:
        self.found.append(Finding(node.lineno, f"`{self._code(node)}` {what}"))

    def run(self) -> list[Finding]:
        self._imports()
        self._aliases()
        self.own_objects = self._own_objects()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name):
                self._name(node)
            elif isinstance(node, ast.Attribute) and not self._continues_chain(node):
                self._chain(node)
            elif isinstance(node, ast.Call):
                self._getattr_call(node)
            elif isinstance(node, ast.MatchClass):
                for name in node.kwd_attrs:
                    why = attribute_refusal(name)
                    if why:
                        self.add(node, f"matches the attribute `{name}`, {why}")
            elif isinstance(node, ast.arg):
                self._binding(node, node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._binding(node, node.name)
                if isinstance(node, ast.ClassDef):
                    self._class(node)
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                self._patching(node)
        unique = {(f.line, f.what): f for f in self.found}
        return sorted(unique.values(), key=lambda f: (f.line, f.what))

    def _imports(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self._import(node, alias.name)
                    local = alias.asname or alias.name.split(".")[0]
                    self.chains[local] = alias.name if alias.asname else alias.name.split(".")[0]
                    self.module_names.add(local)
                    self._binding(node, local)
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    self.add(node, "is a relative import, which reaches beyond the file")
                    continue
                self._import(node, module)
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    if module.split(".")[0] in ALLOWED_MODULES and module != "__future__":
                        why = chain_refusal(full)
                        if why:
                            self.add(node, f"imports `{full}`, {why}")
                    local = alias.asname or alias.name
                    self.chains[local] = full
                    if self._is_module(full):
                        self.module_names.add(local)
                    self._binding(node, local)

    def _import(self, node: ast.AST, name: str) -> None:
        if name.split(".")[0] not in ALLOWED_MODULES:
            self.add(node, f"imports `{name}`, {KERNEL_FILE}")
            return
        why = chain_refusal(name)
        if why:
            self.add(node, f"imports `{name}`, {why}")

    @staticmethod
    def _is_module(chain: str) -> bool:
        root, *links = chain.split(".")
        if root == "os":
            return links == ["path"]
        if root in ("torch", "triton") and len(links) == 1:
            return links[0] in (package_submodules(root) or TORCH_KNOWN_SUBMODULES)
        return root == "triton" and chain.startswith(("triton.language", "triton.testing", "triton.tools"))

    def _chain_of(self, node: ast.AST) -> str | None:
        """The dotted chain an expression names, rooted at a module alias (None otherwise)."""
        links = []
        while isinstance(node, ast.Attribute):
            links.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.chains:
            return ".".join([self.chains[node.id], *reversed(links)])
        return None

    def _aliases(self) -> None:
        """``t = torch``, ``p = os.path``: a name assigned a module chain stands for it (to a fixed point)."""
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.tree):
                value, targets = None, []
                if isinstance(node, ast.Assign):
                    value, targets = node.value, node.targets
                elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    value, targets = node.value, [node.target]
                if value is None:
                    continue
                chain = self._chain_of(value)
                if chain is None:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name) and self.chains.get(target.id) != chain:
                        self.chains[target.id] = chain
                        root_is_module = isinstance(value, ast.Name) and value.id in self.module_names
                        if root_is_module or self._is_module(chain):
                            self.module_names.add(target.id)
                        changed = True

    def _continues_chain(self, node: ast.Attribute) -> bool:
        parent = self.parents.get(node)
        return isinstance(parent, ast.Attribute) and parent.value is node

    def _chain(self, node: ast.Attribute) -> None:
        """One finding at most per attribute chain: the first link refused."""
        chain = self._chain_of(node)
        if chain is not None:
            why = chain_refusal(chain)
            if why:
                self.add(node, f"uses `.{self._refused_link(chain)}` (`{chain}`), {why}")
            elif chain.split(".")[0] not in ALLOWED_MODULES:
                for link in chain.split(".")[1:]:  # sys._getframe: the import is named; name the link too
                    why = attribute_refusal(link)
                    if why:
                        self.add(node, f"uses `.{link}`, {why}")
                        break
            return
        links, root = [], node
        while isinstance(root, ast.Attribute):
            links.append(root.attr)
            root = root.value
        links.reverse()
        own = isinstance(root, ast.Name) and root.id in self.own_objects
        for link in links:
            if own and _private(link):
                continue
            why = attribute_refusal(link)
            if why:
                self.add(node, f"uses `.{link}`, {why}")
                return
            own = False  # what the file's own object holds is not the file's own

    @staticmethod
    def _refused_link(chain: str) -> str:
        for end in range(2, chain.count(".") + 2):
            if chain_refusal(".".join(chain.split(".")[:end])):
                return chain.split(".")[end - 1]
        return chain.rsplit(".", 1)[-1]

    def _name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self._binding(node, node.id)
            return
        parent = self.parents.get(node)
        if node.id in self.module_names:
            as_root = isinstance(parent, ast.Attribute) and parent.value is node
            as_alias = isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is node and all(
                isinstance(t, ast.Name) for t in getattr(parent, "targets", [getattr(parent, "target", None)]))
            as_getattr = (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                          and parent.func.id == "getattr" and parent.args[:1] == [node])
            if not (as_root or as_alias or as_getattr):
                self.add(node, f"passes the module `{self.chains[node.id]}` around as a value, which hides what "
                               "it reaches")
            return
        refused_builtin = hasattr(builtins, node.id) and node.id not in ALLOWED_BUILTINS
        if node.id in self.bound and not refused_builtin:  # a refused builtin's name is named where bound too
            return
        if _dunder(node.id):
            if node.id not in ALLOWED_DUNDER_NAMES:
                self.add(node, f"reads `{node.id}`, {KERNEL_FILE}")
            return
        if not hasattr(builtins, node.id) or node.id in ALLOWED_BUILTINS - {"getattr"}:
            return
        called = isinstance(parent, ast.Call) and parent.func is node
        if node.id == "getattr":
            if not called:
                self.add(node, "reads the builtin `getattr` without calling it: dynamic attribute access hides what "
                               "it reaches")
            return
        if called:
            self.add(node, f"calls `{node.id}()`, a builtin {KERNEL_FILE}")
        else:
            self.add(node, f"reads the builtin `{node.id}`, {KERNEL_FILE}")

    def _binding(self, node: ast.AST, name: str) -> None:
        """Binding the name of a refused builtin would let a read of it pass for the file's own."""
        if hasattr(builtins, name) and (name not in ALLOWED_BUILTINS or name == "getattr") and not _dunder(name):
            self.add(node, f"binds `{name}`, the name of a builtin {KERNEL_FILE}")
        elif _dunder(name) and name not in ALLOWED_DUNDER_NAMES and name in vars(builtins):
            self.add(node, f"binds `{name}`, the name of a builtin {KERNEL_FILE}")

    def _getattr_call(self, node: ast.Call) -> None:
        if not (isinstance(node.func, ast.Name) and node.func.id == "getattr" and "getattr" not in self.bound):
            return
        name = node.args[1] if len(node.args) > 1 else None
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            self.add(node, "calls `getattr()` with a computed name: dynamic attribute access hides what it reaches")
            return
        target = self._chain_of(node.args[0])
        why = chain_refusal(f"{target}.{name.value}") if target else attribute_refusal(name.value)
        if _private(name.value) and name.value not in COURSE_PRIVATE:
            why = why or "a private attribute"
        if why:
            self.add(node, f"calls `getattr()` for `{name.value}`, {why}")

    def _class(self, node: ast.ClassDef) -> None:
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in (
                    "__torch_dispatch__", "__torch_function__"):
                self.add(item, f"defines `{item.name}`, which runs the file's code inside torch's dispatch, "
                               f"{KERNEL_FILE}")
            elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in TENSOR_ENTRY_POINTS:
                self.add(item, f"defines `{item.name}`, which Triton calls inside a launch on what looks like a "
                               f"tensor, {KERNEL_FILE}")

    def _patching(self, node: ast.AST) -> None:
        targets = list(node.targets) if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        while targets:
            target = targets.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                targets.extend(target.elts)
                continue
            while isinstance(target, (ast.Subscript, ast.Starred)):
                target = target.value
            if isinstance(target, ast.Attribute) and self._chain_of(target) is not None:
                self.add(node, f"assigns to `{ast.unparse(target)}` (patches a module), {KERNEL_FILE}")


def findings(source: str, filename: str = "<learner file>") -> list[Finding]:
    """Every line of ``source`` that goes beyond what a kernel file needs (empty: nothing found)."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return [Finding(exc.lineno or 0, f"the file does not parse ({exc.msg})")]
    return _Checker(tree, source).run()


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
