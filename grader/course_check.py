"""`grade check-course`: every catalogue entry against the files of a course checkout.

For each exercise: its stub and solution exist and define the function; its spec module exists;
its docs page exists and is in mkdocs.yml's nav; the README's exercise table and
docs/exercises/index.md have its row; its floor names a measurement file whose key holds figures;
it has hints; `grade bench` knows it (a sweep in `grader.bench_sweep.CONFIGS` or a reason in `NO_BENCH`).
And no exercise, solution or spec file exists that no entry names.

Each problem is one sentence naming the one place to edit. Nothing here imports torch or Triton
and nothing learner-written is imported: files are read as text and parsed with `ast`.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from grader import catalogue
from grader.catalogue import Exercise

#: Files every course checkout has, relative to its root.
NAV_FILE = "mkdocs.yml"
README_FILE = "README.md"
EXERCISE_INDEX = "docs/exercises/index.md"
BENCH_MODULE = "grader/bench_sweep.py"


def _read(root: Path, relative: str) -> str | None:
    path = root / relative
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _defined_functions(source: str) -> set[str] | None:
    """Names of the module-level functions a source file defines (None when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _file_problems(root: Path, relative: str, role: str, function: str) -> list[str]:
    source = _read(root, relative)
    if source is None:
        return [f"the {role} {relative} is missing"]
    names = _defined_functions(source)
    if names is None:
        return [f"the {role} {relative} does not parse as Python"]
    if function not in names:
        return [f"the {role} {relative} does not define `{function}` (the catalogue's `function=`)"]
    return []


def _table_rows(text: str) -> set[int]:
    """The exercise numbers that open a row of a Markdown table: ``| 3 | ...``."""
    return {int(n) for n in re.findall(r"^\|\s*(\d+)\s*\|", text, flags=re.MULTILINE)}


def _dict_keys(source: str, name: str) -> set[int] | None:
    """The integer keys of the module-level dict literal ``name`` (None when there is none)."""
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and isinstance(node.value, ast.Dict):
            return {key.value for key in node.value.keys if isinstance(key, ast.Constant)}
    return None


def _measurement_problems(root: Path, exercise: Exercise) -> list[str]:
    where = f"exercise {exercise.number}'s `floor_measurement` in grader/catalogue.py"
    if exercise.floor is None:
        return []
    if exercise.floor_measurement is None:
        return [f"{where} is None, but its floor {exercise.floor} needs the measurement behind it"]
    relative, key = exercise.floor_measurement
    path = root / relative
    if not path.is_file():
        return [f"{where} names {relative}, which is missing"]
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        return [f"{relative} (named by {where}) is not JSON: {exc}"]
    if not isinstance(record, dict) or not record.get(key):
        return [f"{relative} (named by {where}) has no figures under the key {key!r}"]
    if Path(relative).name not in exercise.floor_reason:
        return [f"exercise {exercise.number}'s `floor_reason` in grader/catalogue.py does not cite "
                f"{Path(relative).name}, the file its `floor_measurement` names"]
    return []


def exercise_problems(root: Path, exercise: Exercise, *, nav: str, readme: str, index: str,
                      bench_numbers: set[int]) -> list[str]:
    """What exercise ``exercise`` lacks in the checkout at ``root``, one sentence each."""
    problems = _file_problems(root, exercise.learner_file, "stub", exercise.function)
    problems += _file_problems(root, exercise.solution_file, "solution", exercise.function)
    spec = exercise.spec_file.relative_to(catalogue.ROOT).as_posix()
    if not (root / spec).is_file():
        problems.append(f"the spec {spec} is missing (its checks, `{exercise.spec_module}`)")
    page = f"docs/{exercise.docs_page}"
    if not (root / page).is_file():
        problems.append(f"the docs page {page} is missing")
    if not re.search(rf"^\s*-\s.*:\s*{re.escape(exercise.docs_page)}\s*$", nav, flags=re.MULTILINE):
        problems.append(f"{NAV_FILE}'s nav has no entry for {exercise.docs_page}")
    if exercise.number not in _table_rows(readme):
        problems.append(f"{README_FILE}'s exercise table has no row for exercise {exercise.number}")
    if exercise.number not in _table_rows(index):
        problems.append(f"{EXERCISE_INDEX}'s table has no row for exercise {exercise.number}")
    if not exercise.hints or not all(hint.strip() for hint in exercise.hints):
        problems.append(f"exercise {exercise.number} has no hints (or an empty one) in grader/catalogue.py")
    problems += _measurement_problems(root, exercise)
    if exercise.number not in bench_numbers:
        problems.append(f"{BENCH_MODULE} has no sweep for exercise {exercise.number} in `CONFIGS` and no "
                        "reason in `NO_BENCH`")
    return problems


def problems(root: Path = catalogue.ROOT, exercises: tuple[Exercise, ...] = catalogue.EXERCISES) -> list[str]:
    """Everything the course checkout at ``root`` lacks, one sentence each; empty when complete."""
    shared = {name: _read(root, name) for name in (NAV_FILE, README_FILE, EXERCISE_INDEX, BENCH_MODULE)}
    missing = [f"{name} is missing: check-course runs in a course checkout, not an installed package"
               for name, text in shared.items() if text is None]
    if missing:
        return missing
    bench = shared[BENCH_MODULE]
    bench_numbers = (_dict_keys(bench, "CONFIGS") or set()) | (_dict_keys(bench, "NO_BENCH") or set())
    numbers = [exercise.number for exercise in exercises]
    found = []
    if numbers != list(range(1, len(numbers) + 1)):
        found.append(f"grader/catalogue.py numbers its exercises {numbers}: they must run 1, 2, 3, ... in order")
    named = {path for exercise in exercises for path in
             (exercise.learner_file, exercise.solution_file, exercise.spec_file.relative_to(catalogue.ROOT).as_posix())}
    for folder in ("exercises", "solutions", "grader/specs"):
        for path in sorted((root / folder).glob("ex[0-9]*.py")):
            if path.relative_to(root).as_posix() not in named:
                found.append(f"{path.relative_to(root).as_posix()} belongs to no exercise: add its entry to "
                             "grader/catalogue.py or remove the file")
    for exercise in exercises:
        found += exercise_problems(root, exercise, nav=shared[NAV_FILE], readme=shared[README_FILE],
                                   index=shared[EXERCISE_INDEX], bench_numbers=bench_numbers)
    return found
