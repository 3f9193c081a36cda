"""`grade check-course`: every exercise folder against the files of a course checkout.

For each exercise: its manifest (``grader/exercises/exNN_slug/exercise.toml``) reads without error; its
stub and solution exist and define the manifest's function, and the solution opens with its commentary
(a module docstring); its spec exists and defines the byte model
the manifest names; its docs page and the chapters it cites exist; its floor names a measurement file
whose key holds figures, and its floor reason cites that file; its folder's bench.py has the workload its `[bench]` names; its
`chapters` are not empty; an exercise with `[expected_traffic]` has its row in the grading page's traffic
table; and nothing is left of the template's text (the sentences `python -m tools.new_exercise` wrote,
found by rendering the template for the exercise and comparing). And no stub or solution exists that no
exercise names. The nav needs nothing: docs/scripts/nav_hook.py fills it from the catalogue.

Each problem is one sentence naming the one place to edit. Nothing here imports torch or Triton and
nothing learner-written is imported: files are read as text and parsed with `ast`.

`grade check-course --grade` also proves what the course's tests hold every exercise to
(`grading_problems`): each stub, as the last commit holds it, fails with "not implemented yet", and each
solution passes, both graded in Triton's interpreter as `grade exercise N` grades them (minutes for the
whole course; `--grade N` grades exercise N only).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

from grader import catalogue
from grader.catalogue import CatalogueError, Exercise

#: `grade bench`'s mechanism (its presence tells a checkout from an installed package).
BENCH_MODULE = "grader/commands/bench_sweep.py"
#: The file of an exercise's folder whose ``WORKLOADS`` a manifest's ``bench.workload`` names.
WORKLOAD_FILE = "bench.py"
#: The tool that writes a new exercise from tools/exercise_template/ (its `rendered` is what it wrote).
NEW_EXERCISE_TOOL = "tools/new_exercise.py"
#: The grading page's table of the bytes each solution moves (docs/scripts/traffic_table.py writes it).
TRAFFIC_TABLE = "docs/assets/traffic-table.txt"
#: What a stub's first failing check says (the `NotImplementedError` raised where the launch goes).
STUB_SENTENCE = "not implemented yet"
#: The seed of check-course's gradings: any fixed one, so that a run can be repeated.
GRADING_SEED = 20261130
#: Manifest fields whose template text describes the template's copy kernel, not the exercise.
TEMPLATE_FIELDS = ("you_learn", "hints")


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


def _manifest(exercise: Exercise) -> str:
    return f"{catalogue.EXERCISES_FOLDER}/{exercise.stem}/{catalogue.MANIFEST}"


def _file_problems(root: Path, relative: str, role: str, function: str, exercise: Exercise,
                   field: str = "function") -> list[str]:
    source = _read(root, relative)
    if source is None:
        return [f"the {role} {relative} is missing"]
    names = _defined_functions(source)
    if names is None:
        return [f"the {role} {relative} does not parse as Python"]
    if function not in names:
        return [f"the {role} {relative} does not define `{function}` (the `{field}` of {_manifest(exercise)})"]
    return []


def _commentary_problems(root: Path, exercise: Exercise) -> list[str]:
    """The solution's module docstring is its commentary: `grade solution N` and the instructor's solution
    page show it before the code."""
    source = _read(root, exercise.solution_file)
    try:
        commentary = ast.get_docstring(ast.parse(source)) if source is not None else ""
    except SyntaxError:
        return []  # said already: the solution does not parse
    if source is not None and not (commentary or "").strip():
        return [f"the solution {exercise.solution_file} has no module docstring: it is the commentary `grade "
                f"solution {exercise.number}` shows before the code (what you will learn, how the kernel works)"]
    return []


def _dict_keys(source: str, name: str) -> set | None:
    """The constant keys of the module-level dict literal ``name`` (None when there is none)."""
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and isinstance(node.value, ast.Dict):
            return {key.value for key in node.value.keys if isinstance(key, ast.Constant)}
    return None


def _measurement_problems(root: Path, exercise: Exercise) -> list[str]:
    where = f"`floor.measurement` in {_manifest(exercise)}"
    if exercise.floor is None or exercise.floor_measurement is None:
        return []  # the manifest's loader already insists on a measurement beside a floor
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
        return [f"`floor.reason` in {_manifest(exercise)} does not cite {Path(relative).name}, the file its "
                "`floor.measurement` names"]
    return []


def _template_renderer(root: Path):
    """`rendered` of the checkout's tools/new_exercise.py (None outside a checkout that has it)."""
    path = root / NEW_EXERCISE_TOOL
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_course_new_exercise", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.rendered


def _docstring_lines(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines += (ast.get_docstring(node) or "").splitlines()
    return lines


def _sentences(relative: str, text: str, exercise: Exercise) -> set[str]:
    """The prose of a file: docstrings of Python, paragraph lines of Markdown, each line stripped. Lines
    naming the exercise's own title, and instructions naming a `grade` command, are the exercise's."""
    lines = _docstring_lines(text) if relative.endswith(".py") else text.splitlines()
    found = set()
    for line in lines:
        line = line.strip()
        if (len(line.split()) >= 5 and re.search(r"[a-z]{3}", line) and not line.startswith(("#", "|", "`", "--8<--"))
                and exercise.title not in line and exercise.nav_title not in line and "grade " not in line):
            found.add(line)
    return found


def _template_problems(root: Path, exercise: Exercise, render) -> list[str]:
    """Text the template wrote that is still there: the exercise's own has not replaced it."""
    problems = []
    manifest = _manifest(exercise)
    if not exercise.chapters:
        problems.append(f"`chapters` in {manifest} is empty: name the chapters (paths under docs/) a learner "
                        "reads before this exercise")
    if render is None:
        return problems
    template = render(exercise.number, exercise.slug, title=exercise.title, function=exercise.function,
                      nav_title=exercise.nav_title)
    template_manifest = catalogue.tomllib.loads(template[manifest])
    for field in TEMPLATE_FIELDS:
        if getattr(exercise, field) and template_manifest.get(field) in (getattr(exercise, field),
                                                                          list(getattr(exercise, field))):
            problems.append(f"`{field}` in {manifest} is still the template's text: write the exercise's own")
    unavailable = template_manifest.get("bench", {}).get("unavailable")
    if unavailable and exercise.bench_unavailable == unavailable:
        problems.append(f"`bench.unavailable` in {manifest} is still the template's ({unavailable!r}): give the "
                        f"bench its `workload` and sizes, or say why this exercise has none")
    for relative, left in template_text_left(root, exercise, template).items():
        problems.append(f"{relative} still holds the template's text ({sorted(left)[0]!r}): replace it with "
                        "the exercise's own")
    return problems


def template_text_left(root: Path, exercise: Exercise, template: dict[str, str]) -> dict[str, set[str]]:
    """By file (the manifest aside), the template's sentences still in the exercise's file."""
    left = {}
    for relative, text in template.items():
        if relative == _manifest(exercise) or not (root / relative).is_file():
            continue
        found = _sentences(relative, text, exercise) & _sentences(relative, (root / relative).read_text("utf-8"),
                                                                    exercise)
        if found:
            left[relative] = found
    return left


def _traffic_table_problems(root: Path, exercises: list[Exercise]) -> list[str]:
    table = _read(root, TRAFFIC_TABLE)
    if table is None:
        return [f"{TRAFFIC_TABLE} is missing: run python docs/scripts/traffic_table.py"]
    rows = {int(found) for found in re.findall(r"^\| (\d+) · ", table, flags=re.MULTILINE)}
    counted = {e.number for e in exercises if e.expected_traffic}
    problems = [f"{TRAFFIC_TABLE} has no row for exercise {number}, whose manifest has `[expected_traffic]`: run "
                "python docs/scripts/traffic_table.py" for number in sorted(counted - rows)]
    problems += [f"{TRAFFIC_TABLE} has a row for exercise {number}, which counts no traffic: run "
                 "python docs/scripts/traffic_table.py" for number in sorted(rows - counted)]
    return problems


def exercise_problems(root: Path, exercise: Exercise) -> list[str]:
    """What exercise ``exercise`` lacks in the checkout at ``root``, one sentence each."""
    problems = _file_problems(root, exercise.learner_file, "stub", exercise.function, exercise)
    problems += _file_problems(root, exercise.solution_file, "solution", exercise.function, exercise)
    problems += _commentary_problems(root, exercise)
    spec = f"{catalogue.EXERCISES_FOLDER}/{exercise.stem}/spec.py"
    if not (root / spec).is_file():
        problems.append(f"the spec {spec} is missing (the checks of exercise {exercise.number})")
    elif exercise.byte_model:
        problems += _file_problems(root, spec, "spec", exercise.byte_model, exercise, field="byte_model")
    if not (root / catalogue.EXERCISES_FOLDER / exercise.stem / "__init__.py").is_file():
        problems.append(f"{catalogue.EXERCISES_FOLDER}/{exercise.stem}/__init__.py is missing (the spec is "
                        f"imported as {exercise.spec_module})")
    page = f"docs/{exercise.docs_page}"
    if not (root / page).is_file():
        problems.append(f"the docs page {page} is missing")
    for chapter in exercise.chapters:
        if not (root / "docs" / chapter).is_file():
            problems.append(f"`chapters` in {_manifest(exercise)} names docs/{chapter}, which is missing")
    problems += _measurement_problems(root, exercise)
    if exercise.bench is not None:
        bench = f"{catalogue.EXERCISES_FOLDER}/{exercise.stem}/{WORKLOAD_FILE}"
        source = _read(root, bench)
        workloads = (_dict_keys(source, "WORKLOADS") or set()) if source is not None else set()
        if exercise.bench.workload not in workloads:
            problems.append(f"`bench.workload` in {_manifest(exercise)} is {exercise.bench.workload!r}, which is not "
                            f"in `WORKLOADS` of {bench} (it has {', '.join(sorted(workloads)) or 'none'})")
    return problems


def load(root: Path) -> tuple[list[Exercise], list[str]]:
    """Every manifest of the checkout at ``root`` that reads, and one sentence per one that does not."""
    exercises, found = [], []
    for path in catalogue.manifests(root):
        if not path.is_file():
            found.append(f"{path.relative_to(root).as_posix()} is missing: every folder under "
                         f"{catalogue.EXERCISES_FOLDER}/ needs its manifest (copy tools/exercise_template/)")
            continue
        try:
            exercises.append(catalogue.read_manifest(path, root))
        except CatalogueError as exc:
            found.append(str(exc))
    exercises.sort(key=lambda e: e.number)
    numbers = [e.number for e in exercises]
    if not found and numbers != list(range(1, len(numbers) + 1)):
        found.append(f"{catalogue.EXERCISES_FOLDER}/ numbers its exercises {numbers}: they must run 1, 2, 3, ... "
                     "with no gap and no repeat")
    return exercises, found


def problems(root: Path = catalogue.ROOT) -> list[str]:
    """Everything the course checkout at ``root`` lacks, one sentence each; empty when complete."""
    root = Path(root)
    bench = _read(root, BENCH_MODULE)
    if bench is None or not (root / catalogue.EXERCISES_FOLDER).is_dir():
        return [f"{BENCH_MODULE} or {catalogue.EXERCISES_FOLDER}/ is missing: check-course runs in a course "
                "checkout, not an installed package"]
    exercises, found = load(root)
    every_manifest_reads = not found  # else the table's rows cannot be matched with the exercises
    # A folder whose manifest does not read still names its stub and solution (its manifest is the problem).
    stems = {exercise.stem for exercise in exercises} | {path.parent.name for path in catalogue.manifests(root)}
    named = {f"{folder}/{stem}.py" for stem in stems for folder in ("exercises", "solutions")}
    for folder in ("exercises", "solutions"):
        for path in sorted((root / folder).glob("ex[0-9]*.py")):
            if path.relative_to(root).as_posix() not in named:
                found.append(f"{path.relative_to(root).as_posix()} belongs to no exercise: add its folder under "
                             f"{catalogue.EXERCISES_FOLDER}/ or remove the file")
    render = _template_renderer(root)
    for exercise in exercises:
        found += exercise_problems(root, exercise)
        found += _template_problems(root, exercise, render)
    if exercises and every_manifest_reads:
        found += _traffic_table_problems(root, exercises)
    return found


# --- the gradings: every stub fails, every solution passes ------------------------------------------------

def _stub_as_committed(root: Path, exercise: Exercise, folder: Path) -> Path:
    """The stub as the last commit holds it, written into ``folder`` (a learner who solved the exercise has
    changed the working file); the working file itself outside a git checkout."""
    from grader.commands import workspace

    path = root / exercise.learner_file
    target = folder / path.name
    try:
        target.write_bytes(workspace.pristine(path))
    except workspace.WorkspaceError:
        target.write_bytes(path.read_bytes())
    return target


def _said(run) -> list[str]:
    return [c.message for c in run.checks if c.failed] + ([run.fatal] if run.fatal else [])


def grading_problems(root: Path, exercises: list[Exercise], report=None) -> list[str]:
    """Grades the stub and the solution of each of ``exercises`` in Triton's interpreter: the stub must fail
    with "not implemented yet" first, the solution must pass. One sentence per file that does not;
    ``report(line)`` hears each verdict as it comes."""
    import tempfile

    from grader.commands import isolation

    found = []
    with tempfile.TemporaryDirectory(prefix="check-course-") as scratch:
        for exercise in exercises:
            stub = _stub_as_committed(Path(root), exercise, Path(scratch))
            run = isolation.run_checks(exercise, stub, seed=GRADING_SEED, interpreter=True)
            said = _said(run)
            stub_fails = not run.passed and bool(said) and said[0].startswith(STUB_SENTENCE)
            if run.passed:
                found.append(f"the stub {exercise.learner_file} passes `grade exercise {exercise.number}`: a stub "
                             f"leaves the kernel to the learner and raises NotImplementedError(\"{STUB_SENTENCE}: "
                             "...\") where the launch goes")
            elif not stub_fails:
                found.append(f"the stub {exercise.learner_file} fails, but its first failure does not say "
                             f"\"{STUB_SENTENCE}\" ({said[0] if said else 'no failure message'}): raise "
                             f"NotImplementedError(\"{STUB_SENTENCE}: ...\") where the launch goes")
            solution = Path(root) / exercise.solution_file
            run = isolation.run_checks(exercise, solution, seed=GRADING_SEED, interpreter=True)
            if not run.passed:
                found.append(f"the solution {exercise.solution_file} fails `grade exercise {exercise.number} --from "
                             f"{exercise.solution_file}` in the interpreter: {(_said(run) or ['no message'])[0]}")
            if report is not None:
                report(f"exercise {exercise.number}: the stub {'fails' if stub_fails else 'does NOT fail'} with "
                       f"\"{STUB_SENTENCE}\", the solution {'passes' if run.passed else 'does NOT pass'}")
    return found
