"""Which tests grade: the rule behind the `grading` marker that `pytest -m "not grading"` leaves out.

The rule: a test grades when its function, or a fixture or function of its own module that it reaches,
names an entry point that runs a course kernel (in a learner process, or a reference solution in this
one), builds the site or drives a browser (`ENTRY_POINTS`), or passes a `grade` subcommand that grades
(`GRADING_COMMANDS`, in its body or its parametrize values). It is read from the test
module's source, so a new test that grades is marked without anyone remembering to (a test that asks for
one of conftest.py's GRADING_FIXTURES, the site build and the browser, grades too); conftest.py also
fails any unmarked test that starts a Python or a browser process, so a miss shows up in the fast loop.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase

# Dotted names (fnmatch patterns) as the test module imports them: an alias is resolved, and
# `tests.grading` and a bare `grading` are the same module.
ENTRY_POINTS = (
    "sys.executable",  # a Python child: `python -m grader.commands.cli ...`, a compile, a wheel build
    "grading.grade",  # tests/grading.py: grades a learner file in a sandboxed child
    "grader.commands.isolation.run_checks",
    "grader.commands.isolation.count_traffic",  # runs the traffic checks in a judge of their own
    "grader.learner.sandbox.start",  # the sandbox's keeper is the process a learner file runs in
    "grader.prestart.Template",  # a template process, which forks the judges
    "grader.commands.show.record_in_child",  # `grade show` runs the learner's file in an interpreter child
    "grader.commands.show.command",
    "hostile_corpus",  # every helper there grades or stages a hostile file for grading
    "course_copy",  # a copy of the course whose tools and tests run in Python children
    "solutions",  # a reference solution run here, in Triton's interpreter, on the exercise's sizes
    "tools.benchmarks.ex[0-9][0-9]_*",  # an exercise's GPU benchmark, run here on stand-ins: it times the solution
    "grader.judge.learner_process.LearnerProcess",  # a learner file in its sandboxed process, driven by the test
    "site_helpers.build_site",
    "site_helpers.start_chromium",
)
# `grade` subcommands that start a learner process (given to cli.main or to a test's wrapper of it).
GRADING_COMMANDS = frozenset({"exercise", "batch", "check-course", "show", "watch"})


def _aliases(tree: ast.Module) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_entry_point(dotted: str) -> bool:
    for entry in ENTRY_POINTS:
        for name in (dotted, dotted.removeprefix("tests.")):
            if any(fnmatchcase(name, pattern) for pattern in (entry, f"{entry}.*", f"*.{entry}")):
                return True
    return False


def _names_a_grading_command(call: ast.Call) -> bool:
    for argument in call.args:
        if isinstance(argument, (ast.List, ast.Tuple)) and argument.elts:
            argument = argument.elts[0]
        if isinstance(argument, ast.Constant) and argument.value in GRADING_COMMANDS:
            return True
    return False


def _parametrizes_a_grading_command(function: ast.FunctionDef) -> bool:
    """`@pytest.mark.parametrize("argv", [["show", "1"], ...])`: argument lists that start with a command."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call):
            for values in decorator.args[1:]:
                for node in ast.walk(values):
                    if (isinstance(node, (ast.List, ast.Tuple)) and node.elts and isinstance(node.elts[0], ast.Constant)
                            and node.elts[0].value in GRADING_COMMANDS):
                        return True
    return False


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """Module-level functions (tests, fixtures, helpers) and the methods of module-level classes."""
    found: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault(item.name, item)
    return found


def grading_functions(source: str) -> set[str]:
    """Names of the module's functions (tests, fixtures, helpers) that grade, under the rule above."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    functions = _functions(tree)
    grades: set[str] = set()
    uses: dict[str, set[str]] = {}
    for name, function in functions.items():
        used = {argument.arg for argument in function.args.args} & functions.keys()  # fixtures
        if _parametrizes_a_grading_command(function):
            grades.add(name)
        for node in (node for statement in function.body for node in ast.walk(statement)):  # not decorators
            if isinstance(node, ast.Call) and _names_a_grading_command(node):
                grades.add(name)
            if isinstance(node, (ast.Attribute, ast.Name)):
                dotted = _dotted(node)
                if dotted is None:
                    continue
                head, _, rest = dotted.partition(".")
                resolved = aliases.get(head, head) + (f".{rest}" if rest else "")
                if _is_entry_point(resolved):
                    grades.add(name)
                if isinstance(node, ast.Name) and node.id in functions and node.id != name:
                    used.add(node.id)
        uses[name] = used
    changed = True
    while changed:  # a test that calls a helper (or asks for a fixture) that grades, grades
        changed = False
        for name, used in uses.items():
            if name not in grades and used & grades:
                grades.add(name)
                changed = True
    return grades
