"""The boundaries of the grader package, read from the source with `ast`, without importing anything.

* The installed package ships only `grader/`: no module in it may import the learners' files
  (`exercises`), the reference kernels (`solutions`) or the maintainers' tools (`tools`), which an
  installed copy does not have. The wheel carries every exercise's manifest and spec, and none of the
  learner files the course's own tests grade (each exercise folder's wrong/, natural/ and hostile/).
* The core (grader/ outside grader/exercises/) names no exercise.
* The trust boundary: the learner's side (grader/learner/) loads nothing of the judge's side or the
  commands', only the wire (grader/wire/) and the few modules every process shares, following every
  import, at top level or inside a function, through every module it leads to."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "grader"
#: Top-level packages of the repository that the installed package does not contain.
NOT_SHIPPED = ("exercises", "solutions", "tools")
#: Folders of an exercise that stay in the checkout: learner files, graded by the course's tests.
CHECKOUT_ONLY = ("wrong", "natural", "hostile")


def shipped_modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if not _checkout_only(path))


def _checkout_only(path: Path) -> bool:
    parts = path.relative_to(PACKAGE).parts
    return len(parts) > 2 and parts[0] == "exercises" and parts[2] in CHECKOUT_ONLY


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, importer: str, *, is_package: bool = False) -> list[tuple[int, str]]:
    """Every module ``source`` imports, absolute (relative imports resolved against ``importer``),
    with its line number; imports inside functions count too."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, _from_base(node, importer, is_package)))
    return found


def _from_base(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module a ``from ... import`` reads from, relative levels resolved against ``importer``."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def forbidden_imports(path: Path) -> list[str]:
    name = module_name(path)
    lines = []
    for lineno, imported in imported_modules(path.read_text(), name, is_package=path.name == "__init__.py"):
        if imported.split(".")[0] in NOT_SHIPPED:
            lines.append(f"{path.relative_to(ROOT)}:{lineno} imports {imported}")
    return lines


def test_the_grader_package_imports_nothing_it_does_not_ship():
    modules = shipped_modules()
    assert len(modules) > 30, "the walk found too few grader modules: is PACKAGE right?"
    offenders = [line for path in modules for line in forbidden_imports(path)]
    assert not offenders, ("the installed package has no exercises/, solutions/ or tools/; move what these need "
                           "into grader/ or the import out of it:\n" + "\n".join(offenders))


@pytest.mark.parametrize("source,importer,expected", [
    ("import solutions.ex03_softmax", "grader.x", ["solutions.ex03_softmax"]),
    ("def f():\n    from tools.benchmarks import meta\n", "grader.x", ["tools.benchmarks"]),
    ("from exercises import ex01_vector_add", "grader.x", ["exercises"]),
    ("from . import perf", "grader.exercises.ex01", ["grader.exercises"]),
    ("from .. import perf", "grader.exercises.ex01", ["grader"]),
])
def test_the_walk_sees_every_kind_of_import(source, importer, expected):
    assert [name for _, name in imported_modules(source, importer)] == expected


def test_the_wheel_ships_the_manifests_and_specs_but_no_learner_files(tmp_path):
    """Build the wheel from a copy of what it is built from, and list it."""
    import shutil
    import subprocess
    import sys
    import zipfile

    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, tmp_path / part)
    shutil.copytree(PACKAGE, tmp_path / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(tmp_path)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "No module named" in done.stderr:
        pytest.skip(f"cannot build a wheel here: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    wheel, = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    folders = sorted(p.name for p in (PACKAGE / "exercises").iterdir() if p.is_dir() and p.name.startswith("ex"))
    for folder in folders:
        for name in ("exercise.toml", "spec.py", "__init__.py"):
            assert f"grader/exercises/{folder}/{name}" in names, (folder, name)
    leaked = [n for n in names if any(f"/{part}/" in n for part in CHECKOUT_ONLY)]
    assert not leaked, leaked[:5]
    assert "grader/catalogue.py" in names and "grader/exercises/_shared/softmax_checks.py" in names


# --- the core names no exercise ------------------------------------------------------------------

#: Core modules that still hold an exercise's own code, each to move into its exercise's folder
#: (grader/exercises/exNN_slug/) and be loaded through the manifest. The list only shrinks: a module
#: that stops naming an exercise must leave it, and any other core module that names one fails.
NOT_MOVED_YET: dict[str, str] = {}


def exercise_names() -> set[str]:
    """What names an exercise in code: its folder name, and its slug and function when they are not
    everyday words (`add`, `softmax` and `decode` are also a set's, torch's and bytes' methods)."""
    from grader import catalogue

    return {name for e in catalogue.EXERCISES for name in (e.stem, e.slug, e.function) if "_" in name}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def names_in_code(source: str, names: set[str]) -> set[str]:
    """The ``names`` the code uses as identifiers or inside strings; comments and docstrings (which may
    give an example) do not count."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words.add(node.name)
        elif isinstance(node, ast.alias):
            words.update(node.name.split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.update(re.findall(r"\w+", node.value))
    return names & words


def core_modules() -> list[Path]:
    return [path for path in shipped_modules() if path.relative_to(PACKAGE).parts[0] != "exercises"]


def test_the_core_names_no_exercise():
    names = exercise_names()
    naming = {path.relative_to(ROOT).as_posix(): sorted(names_in_code(path.read_text(), names))
              for path in core_modules()}
    naming = {module: found for module, found in naming.items() if found}
    new = {module: found for module, found in naming.items() if module not in NOT_MOVED_YET}
    assert not new, ("grader/ outside grader/exercises/ is the mechanism and names no exercise; move this code "
                     f"into the exercise's folder and load it through its manifest: {new}")
    moved = sorted(set(NOT_MOVED_YET) - set(naming))
    assert not moved, f"{moved} no longer name an exercise: take them off NOT_MOVED_YET"


@pytest.mark.parametrize("source,found", [
    ("def vector_add(x): pass", {"vector_add"}),
    ("WORKLOADS = {'bias_gelu': 1}", {"bias_gelu"}),
    ("path = f'grader/exercises/ex03_softmax/spec.py'", {"ex03_softmax"}),
    ("'''A docstring may give ex03_softmax as an example.'''\n# so may a comment: vector_add\nx = 1", set()),
    ("seen.add(x); data.decode()", set()),
])
def test_the_name_check_reads_code_not_prose(source, found):
    assert names_in_code(source, {"vector_add", "bias_gelu", "ex03_softmax"}) == found


# --- the sides of the trust boundary -------------------------------------------------------------

#: The folders of grader/ by the process their code runs in (docs/contributing.md draws them).
SIDE_FOLDERS = ("judge", "learner", "wire", "commands")
#: What each side must never load, however indirectly: the learner's process runs the learner's file
#: beside whatever it imports, so it holds no code of the judge (which decides) or of the grade command;
#: the wire is spoken by both and loads neither; the judge does not load the commands that start it.
MUST_NOT_REACH = {"learner": ("judge", "commands"), "wire": ("judge", "learner", "commands"),
                  "judge": ("commands",)}
#: The modules of grader/ on no side: read by every process, and so held to what each side may reach.
SHARED = {
    "grader": "the package's docstring and version",
    "grader.catalogue": "the exercises, read from their manifests",
    "grader.bandwidth": "GPU timing, the measured ceiling and the fraction: the judge's check, the learner "
                   "process's cross-check and `grade bench` all time with it",
    "grader.device": "the card, read once: the judge's plans, the learner process's memory limit on an emulated "
                     "card and `grade doctor` read it",
    "grader.plan": "each exercise's plan for a card: the judge's specs grade what it gives, `grade doctor` and the "
                   "GPU page show it (the learner's process never loads it: it asks the judge's clock)",
    "grader.known_cards": "five cards as PyTorch describes them, for the plans' tests and the GPU page; no grading "
                          "reads it",
    "grader.prestart": "templates that imported torch once: the grade process forks judges from one, the judge "
                       "forks the learner's keepers from another",
}


def side_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SIDE_FOLDERS else None


def grader_modules() -> dict[str, Path]:
    return {module_name(path): path for path in shipped_modules()}


def grader_imports(source: str, importer: str, modules: set[str], *, is_package: bool = False) -> set[str]:
    """The grader modules ``source`` loads, at top level or inside a function: ``from grader.wire import
    protocol`` loads ``grader.wire.protocol`` and the packages above it."""
    named = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, importer, is_package)
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)
    parts = [name.split(".") for name in named]
    loaded = {".".join(p[:i]) for p in parts for i in range(1, len(p) + 1)}
    return loaded & modules


def import_graph() -> dict[str, set[str]]:
    modules = grader_modules()
    return {name: grader_imports(path.read_text(), name, set(modules), is_package=path.name == "__init__.py")
            for name, path in modules.items()}


def crossings(graph: dict[str, set[str]]) -> list[str]:
    """Every module on a side that loads, through any chain of imports, a module its side must not
    reach; each with the chain."""
    found = []
    for start in sorted(graph):
        forbidden = MUST_NOT_REACH.get(side_of(start) or "", ())
        if not forbidden:
            continue
        chains = {start: [start]}
        queue = [start]
        while queue:
            current = queue.pop(0)
            for nxt in sorted(graph.get(current, ())):
                if nxt not in chains:
                    chains[nxt] = chains[current] + [nxt]
                    queue.append(nxt)
        found += [" -> ".join(chain) for target, chain in sorted(chains.items()) if side_of(target) in forbidden]
    return found


def test_no_side_loads_what_its_side_of_the_boundary_must_not():
    graph = import_graph()
    assert {side_of(name) for name in graph} >= set(SIDE_FOLDERS), "the walk found no module of some side"
    crossing = crossings(graph)
    assert not crossing, ("the learner's process may load only the learner's side, the wire and the shared "
                          "modules; the wire neither side; the judge not the commands. These chains cross:\n"
                          + "\n".join(crossing))


def test_every_core_module_is_on_a_side_or_shared_by_all():
    flat = sorted(name for name in grader_modules()
                  if side_of(name) is None and not name.startswith("grader.exercises") and name not in SHARED)
    assert not flat, (f"{flat} sit in grader/ on no side: move each into the folder of the process that runs it "
                      f"({', '.join(SIDE_FOLDERS)}), or list it in SHARED with what every side reads in it")
    stale = sorted(name for name in SHARED if name not in grader_modules())
    assert not stale, f"{stale} are listed in SHARED but no longer exist"


@pytest.mark.parametrize("graph,expected", [
    ({"grader.learner.runner": {"grader.wire.protocol"}, "grader.wire.protocol": set()}, []),
    ({"grader.learner.runner": {"grader.catalogue"}, "grader.catalogue": {"grader.judge.checks"}},
     ["grader.learner.runner -> grader.catalogue -> grader.judge.checks"]),
    ({"grader.wire.results": {"grader.learner.call_watch"}}, ["grader.wire.results -> grader.learner.call_watch"]),
    ({"grader.judge.checks": {"grader.learner.call_watch", "grader.wire.guards"}}, []),
    ({"grader.judge.plugin": {"grader.commands.report"}}, ["grader.judge.plugin -> grader.commands.report"]),
])
def test_a_crossing_is_found_through_any_chain(graph, expected):
    assert crossings(graph) == expected


@pytest.mark.parametrize("source,expected", [
    ("from grader.wire import protocol", {"grader", "grader.wire", "grader.wire.protocol"}),
    ("def f():\n    from grader.judge.checks import run_case\n", {"grader", "grader.judge", "grader.judge.checks"}),
    ("import grader.judge.clock as clock", {"grader", "grader.judge", "grader.judge.clock"}),
    ("from grader import catalogue, bandwidth", {"grader", "grader.catalogue", "grader.bandwidth"}),
])
def test_the_walk_resolves_what_an_import_loads(source, expected):
    modules = {"grader", "grader.wire", "grader.wire.protocol", "grader.judge", "grader.judge.checks",
               "grader.judge.clock", "grader.catalogue", "grader.bandwidth"}
    assert grader_imports(source, "grader.learner.runner", modules) == expected


# --- one learner loader ----------------------------------------------------------------------------

#: The one module that runs a file as a module: every process that imports a learner's file goes
#: through it (the learner's process, `grade show`'s child, `grade bench`).
LOADER = "grader/learner/loader.py"
#: Other modules that run a file by path, none of them a learner's.
RUNS_COURSE_FILES = {"grader/commands/course_check.py": "the checkout's tools/new_exercise.py"}


def runs_a_file(source: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr in ("exec_module", "spec_from_file_location", "run_path")
               for node in ast.walk(ast.parse(source)))


def test_a_learner_file_is_imported_by_the_one_loader():
    running = sorted(path.relative_to(ROOT).as_posix() for path in shipped_modules() if runs_a_file(path.read_text()))
    assert LOADER in running, "the walk no longer sees the loader: is runs_a_file right?"
    others = [module for module in running if module != LOADER and module not in RUNS_COURSE_FILES]
    assert not others, (f"{others} import a file by path: import a learner's file with "
                        "grader.learner.loader.import_file, so every process loads it one way")


# --- one mode decision -----------------------------------------------------------------------------

#: The module that decides, once per process, whether kernels run on the GPU or in Triton's interpreter.
MODE_DECIDER = "grader/device.py"
#: Modules that still decide it themselves (read TRITON_INTERPRET or ask torch for CUDA), each to ask
#: the decider instead. The list only shrinks: a module that stops deciding must leave it.
DECIDES_ITSELF_YET: dict[str, str] = {}


def mode_reads(source: str) -> list[int]:
    """Lines that decide GPU or interpreter: a read of TRITON_INTERPRET or a call of cuda.is_available()."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            names_the_variable = bool(node.args) and isinstance(node.args[0], ast.Constant) \
                and node.args[0].value == "TRITON_INTERPRET"
            if called.endswith("cuda.is_available") or (called.endswith(("environ.get", "getenv")) and names_the_variable):
                lines.append(node.lineno)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.slice, ast.Constant) and node.slice.value == "TRITON_INTERPRET":
            lines.append(node.lineno)
    return lines


def test_one_module_decides_gpu_or_interpreter():
    deciding = {path.relative_to(ROOT).as_posix(): mode_reads(path.read_text()) for path in shipped_modules()}
    deciding = {module: lines for module, lines in deciding.items() if lines}
    assert MODE_DECIDER in deciding, "the walk no longer sees the decider: is mode_reads right?"
    new = {m: lines for m, lines in deciding.items() if m != MODE_DECIDER and m not in DECIDES_ITSELF_YET}
    assert not new, (f"{new} decide GPU or interpreter themselves (lines shown): ask {MODE_DECIDER} instead, so "
                     "every process and command agrees")
    done = sorted(set(DECIDES_ITSELF_YET) - set(deciding))
    assert not done, f"{done} no longer decide: take them off DECIDES_ITSELF_YET"


@pytest.mark.parametrize("source,lines", [
    ("import os\nx = os.environ.get('TRITON_INTERPRET') == '1'", [2]),
    ("import torch\nif torch.cuda.is_available():\n    pass", [2]),
    ("import os\nflag = os.environ['TRITON_INTERPRET']", [2]),
    ("import os\nos.environ['TRITON_INTERPRET'] = '1'\nos.environ.pop('TRITON_INTERPRET', None)", []),
])
def test_a_mode_decision_is_seen(source, lines):
    assert mode_reads(source) == lines
