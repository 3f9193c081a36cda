"""The catalogue of exercises, read from one manifest per exercise.

Each exercise is a folder, ``grader/exercises/exNN_slug/``: its manifest ``exercise.toml`` (title,
function, hints, floor and the measurement behind it, the sizes `grade bench` sweeps, the bytes its
traffic check must count, the constants its spec uses), its checks ``spec.py`` and, in a course
checkout, the learner files the course's own tests grade against it (``wrong/``, ``natural/``,
``hostile/``). Adding an exercise is that folder, one stub in ``exercises/``, one solution in
``solutions/`` and one page in ``docs/exercises/``; `grade check-course` names whatever is missing.

The CLI (`grade list`, `grade exercise N`, `grade hint N`), the course's own tests and the site read
`EXERCISES` (or `exercises()`): the manifests are read the first time it is asked for, not when this
module is imported, and kept. This module imports nothing but the standard library (the site's
scripts load it by path).

Floors are fractions of the bandwidth ceiling measured on the learner's own GPU (see `grader.bandwidth`).
Each one carries the measurement that justifies it.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: The repository root: exercises/, solutions/, docs/ and grader/ live here.
ROOT = Path(__file__).resolve().parent.parent
#: Where the exercise folders are, relative to the repository root.
EXERCISES_FOLDER = "grader/exercises"
#: The manifest's name inside an exercise folder.
MANIFEST = "exercise.toml"
#: The dtypes a bench may sweep, as the manifest spells them.
BENCH_DTYPES = ("float32", "float16", "bfloat16")


class CatalogueError(ValueError):
    """A manifest that cannot be used: the sentence names the file and the field."""


@dataclass(frozen=True)
class BenchSweep:
    """What `grade bench N` sweeps on a GPU (the manifest's ``[bench]`` table)."""

    #: The name of the inputs and PyTorch baselines in `WORKLOADS` of the exercise folder's bench.py.
    workload: str
    #: The shapes, smallest first; keys are the byte model's parameter names, in its order.
    sizes: tuple[dict[str, int], ...] = field(compare=False)
    #: Which shape key is the plot's x axis, and its label.
    x_key: str
    x_label: str
    dtype: str = "float32"
    #: Also time ``torch.compile`` of the first baseline.
    compile: bool = False
    #: A sentence under the table.
    note: str = ""


#: The families a check belongs to, for partial credit (`Grading`): a check is ``performance`` when its
#: group (its name before ``[``) is one of `PERFORMANCE_CHECKS`, ``lessons`` when the manifest lists it
#: among its lessons, and ``correctness`` otherwise.
FAMILIES = ("correctness", "lessons", "performance")
#: The checks that time the kernel (every spec calls its timed check ``test_performance``).
PERFORMANCE_CHECKS = ("performance",)


@dataclass(frozen=True)
class Grading:
    """How `grade batch` scores, ranks and explains a class (the manifest's optional ``[grading]``).

    Partial credit: each family of checks earns its weight times the share of its checks that passed;
    a family with no check that counts (performance without a GPU) drops out and the others share its
    weight in proportion. The defaults give correctness 60, lessons 20 and performance 20 of every 100.
    """

    #: The weight of each family in `FAMILIES`.
    weights: dict[str, float] = field(default_factory=lambda: {"correctness": 60.0, "lessons": 20.0,
                                                               "performance": 20.0}, compare=False)
    #: The checks (groups: a spec's test names without ``test_``) that teach a lesson beyond a right
    #: answer: the bytes moved, the byte model.
    lessons: tuple[str, ...] = ("traffic", "byte_model")
    #: The chapter that teaches a mistake, keyed by a check, a failure kind or a family (looked up in
    #: that order); otherwise the exercise's first chapter. Values are among the exercise's chapters.
    teaches: dict[str, str] = field(default_factory=dict, compare=False)
    #: The leaderboard's column: what the performance record's ``fraction`` is a fraction of.
    leaderboard: str = "fraction of the copy ceiling"
    #: Fractions this close to each other share a rank. Measured: two batches of exercise 1's solution,
    #: natural files and wrong variants on the H200 moved a file's fraction by up to 2.75 points, and
    #: ranked the class alike from a margin of 5 points up (an earlier pair of batches: 1.7 points, from 4
    #: up); docs/measurements/h200-class-rank-noise.json, docs/learner-tools.md. The same 5 points as a
    #: verdict's own noise (`grader.bandwidth.GRADING_NOISE`), measured apart.
    rank_margin: float = 0.05

    def family(self, check_name: str) -> str:
        """The family of a check, from its name (``matches_reference[n1025-fp32]``)."""
        group = check_name.split("[", 1)[0]
        if group in PERFORMANCE_CHECKS:
            return "performance"
        return "lessons" if group in self.lessons else "correctness"


@dataclass(frozen=True)
class Exercise:
    """One exercise: where its files are, how it is introduced and how it is graded."""

    number: int
    slug: str
    title: str
    #: The learner-facing function the file must define, e.g. ``"add"``.
    function: str
    #: Hints in tiers: ``grade hint N`` shows the next one each time.
    hints: tuple[str, ...]
    #: Minimum fraction of the measured bandwidth ceiling on a GPU (None: not a bandwidth exercise).
    floor: float | None
    #: Why the floor is where it is, with the measurement behind it.
    floor_reason: str
    #: The measurement the reason cites: (file relative to the repository root, the key in it that
    #: holds the figures). None only where there is no floor. `grade check-course` opens it.
    floor_measurement: tuple[str, str] | None
    #: The short title of the site's navigation ("Fused softmax").
    nav_title: str = ""
    #: One phrase: what the learner learns (the exercise tables).
    you_learn: str = ""
    #: The chapters to read first, paths relative to docs/.
    chapters: tuple[str, ...] = ()
    #: What the learner writes, in Markdown (the exercise tables): "`add(x, y)`".
    you_write: str = ""
    #: The spec's function that counts the fewest bytes a call must move (None: there is none).
    byte_model: str | None = None
    #: The dtypes the checks run the learner's kernel in ("fp32", "fp16", "bf16"); a card skips those it
    #: does not compute natively (`grader.plan`). Empty where the exercise times no kernel of a dtype.
    dtypes: tuple[str, ...] = ()
    #: The sweep of `grade bench N`, or None with `bench_unavailable` saying why there is none.
    bench: BenchSweep | None = None
    bench_unavailable: str | None = None
    #: Bytes the solution must move in the spec's traffic check: {tensor: (loaded, stored)}.
    expected_traffic: dict[str, tuple[int, int]] | None = field(default=None, compare=False)
    #: Values the spec reads from the manifest instead of restating them (``MAX_COLS``).
    constants: dict[str, Any] = field(default_factory=dict, compare=False)
    #: Partial credit, the leaderboard and the class report's chapters (``[grading]``, every field optional).
    grading: Grading = field(default_factory=Grading, compare=False)
    #: The repository the exercise belongs to; None for this one (`ROOT`, read when a path is asked for).
    root: Path | None = field(default=None, compare=False, repr=False)

    @property
    def stem(self) -> str:
        """``"ex03_softmax"``: the name of the folder, the stub, the solution and the docs page."""
        return f"ex{self.number:02d}_{self.slug}"

    @property
    def base(self) -> Path:
        """The repository root the paths below are in."""
        return self.root if self.root is not None else ROOT

    @property
    def folder(self) -> Path:
        """``grader/exercises/exNN_slug/``: the manifest, the spec and the course's learner files."""
        return self.base / EXERCISES_FOLDER / self.stem

    @property
    def spec_module(self) -> str:
        """Dotted name of the pytest module holding this exercise's checks."""
        return f"grader.exercises.{self.stem}.spec"

    manifest = property(lambda self: self.folder / MANIFEST, doc="The manifest, ``exercise.toml``.")
    spec_file = property(lambda self: self.folder / "spec.py", doc="The checks: an ordinary pytest module.")
    wrong_dir = property(lambda self: self.folder / "wrong",
                         doc="Known-wrong learner files, each declaring the message the grader must give it.")
    natural_dir = property(lambda self: self.folder / "natural",
                           doc="Correct learner files written otherwise than the solution: each must pass.")
    hostile_dir = property(lambda self: self.folder / "hostile",
                           doc="Files that attack the grader, each declaring what a sound grader does with it.")
    learner_file = property(lambda self: f"exercises/{self.stem}.py",
                            doc="The stub the learner edits, relative to the repository root.")
    solution_file = property(lambda self: f"solutions/{self.stem}.py", doc="The solution, relative to the root.")
    docs_page = property(lambda self: f"exercises/{self.stem}.md", doc="The exercise's page, relative to docs/.")
    learner_path = property(lambda self: self.base / self.learner_file, doc="The stub's absolute path.")
    solution_path = property(lambda self: self.base / self.solution_file, doc="The solution's absolute path.")


# --- reading and validating a manifest ---------------------------------------------------------------

_FOLDER_NAME = re.compile(r"ex(\d{2})_([a-z][a-z0-9_]*)")
_KNOWN = {"number", "slug", "title", "nav_title", "function", "byte_model", "you_learn", "chapters", "you_write",
          "hints", "dtypes",
          "floor", "bench", "expected_traffic", "constants", "grading"}
_FLOOR_KEYS = {"fraction", "reason", "measurement"}
_BENCH_KEYS = {"workload", "sizes", "x_key", "x_label", "dtype", "compile", "note", "unavailable"}
_GRADING_KEYS = {"weights", "lessons", "teaches", "leaderboard", "rank_margin"}


class _Reader:
    """Typed access to one manifest, each problem a CatalogueError naming the file and the field."""

    def __init__(self, path: Path, data: dict, shown: str):
        self.path, self.data, self.shown = path, data, shown

    def error(self, field_name: str, sentence: str) -> CatalogueError:
        return CatalogueError(f"{self.shown}: `{field_name}` {sentence}")

    def get(self, table: dict, name: str, kind: type | tuple[type, ...], *, where: str = "",
            required: bool = True, default: Any = None) -> Any:
        full = f"{where}.{name}" if where else name
        if name not in table:
            if required:
                raise self.error(full, "is missing")
            return default
        value = table[name]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds:
            raise self.error(full, f"must be {_kind_words(kinds)}, not a boolean")
        if not isinstance(value, kinds):
            raise self.error(full, f"must be {_kind_words(kinds)}, not {_value_words(value)}")
        if isinstance(value, str) and not value.strip() and required:
            raise self.error(full, "is empty")
        return value

    def unknown(self, table: dict, known: set[str], where: str = "") -> None:
        for name in table:
            if name not in known:
                full = f"{where}.{name}" if where else name
                raise self.error(full, f"is not a field the catalogue knows (it knows {', '.join(sorted(known))})")


def _kind_words(kinds: tuple[type, ...]) -> str:
    words = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
             dict: "a table"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def _value_words(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__) + f" ({value!r})"[:60]


def read_manifest(path: Path, root: Path = ROOT) -> Exercise:
    """The exercise whose manifest is ``path``; CatalogueError with one sentence when a field is wrong."""
    path = Path(path)
    try:
        shown = path.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        shown = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatalogueError(f"{shown} cannot be read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{shown} is not valid TOML: {exc}") from None
    r = _Reader(path, data, shown)
    r.unknown(data, _KNOWN)

    number = r.get(data, "number", int)
    if number < 1:
        raise r.error("number", f"must be 1 or more, not {number}")
    slug = r.get(data, "slug", str)
    folder = _FOLDER_NAME.fullmatch(path.parent.name)
    if folder is None:
        raise CatalogueError(f"{shown}: the folder {path.parent.name!r} must be named exNN_slug: two digits, an "
                             "underscore and the slug")
    if int(folder.group(1)) != number:
        raise r.error("number", f"is {number}, but the folder {path.parent.name} says {int(folder.group(1))}")
    if folder.group(2) != slug:
        raise r.error("slug", f"is {slug!r}, but the folder {path.parent.name} says {folder.group(2)!r}")
    title = r.get(data, "title", str)
    function = r.get(data, "function", str)
    if not function.isidentifier():
        raise r.error("function", f"must be a Python name, not {function!r}")
    nav_title = r.get(data, "nav_title", str)
    you_learn = r.get(data, "you_learn", str, required=False, default="")
    chapters = r.get(data, "chapters", list, required=False, default=[])
    for i, chapter in enumerate(chapters):
        if not isinstance(chapter, str) or not chapter.endswith(".md"):
            raise r.error(f"chapters[{i}]", f"must be a page path relative to docs/ (chapters/04_fused_softmax.md), "
                                           f"not {chapter!r}")
    you_write = r.get(data, "you_write", str, required=False, default="")
    byte_model = r.get(data, "byte_model", str, required=False)
    if byte_model is not None and not byte_model.isidentifier():
        raise r.error("byte_model", f"must name a function of the spec, not {byte_model!r}")

    hints = r.get(data, "hints", list)
    if not hints:
        raise r.error("hints", "is empty: `grade hint N` needs at least one")
    for i, hint in enumerate(hints):
        if not isinstance(hint, str) or not hint.strip():
            raise r.error(f"hints[{i}]", "must be a sentence, and is empty or not a string")

    dtypes = r.get(data, "dtypes", list, required=False, default=[])
    for i, name in enumerate(dtypes):
        if name not in ("fp32", "fp16", "bf16"):
            raise r.error(f"dtypes[{i}]", f"must be one of fp32, fp16, bf16, not {name!r}")

    floor_table = r.get(data, "floor", dict)
    r.unknown(floor_table, _FLOOR_KEYS, "floor")
    fraction = r.get(floor_table, "fraction", (int, float), where="floor", required=False)
    if fraction is not None and not 0 < fraction <= 1:
        raise r.error("floor.fraction", f"must be a fraction of the ceiling between 0 and 1, not {fraction}")
    reason = r.get(floor_table, "reason", str, where="floor")
    measurement = r.get(floor_table, "measurement", dict, where="floor", required=False)
    floor_measurement = None
    if measurement is not None:
        r.unknown(measurement, {"file", "key"}, "floor.measurement")
        floor_measurement = (r.get(measurement, "file", str, where="floor.measurement"),
                             r.get(measurement, "key", str, where="floor.measurement"))
    elif fraction is not None:
        raise r.error("floor.measurement", f"is missing: the floor {fraction} needs the measurement behind it "
                                           "({ file = \"docs/measurements/....json\", key = \"rows\" })")

    bench, unavailable = _bench(r, r.get(data, "bench", dict))
    traffic = _traffic(r, r.get(data, "expected_traffic", dict, required=False))
    constants = r.get(data, "constants", dict, required=False, default={})
    grading = _grading(r, r.get(data, "grading", dict, required=False, default={}), tuple(chapters))

    return Exercise(number=number, slug=slug, title=title, function=function, hints=tuple(hints),
                    floor=None if fraction is None else float(fraction), floor_reason=reason,
                    floor_measurement=floor_measurement, nav_title=nav_title, you_learn=you_learn,
                    chapters=tuple(chapters), you_write=you_write, byte_model=byte_model, dtypes=tuple(dtypes), bench=bench, bench_unavailable=unavailable,
                    expected_traffic=traffic, constants=dict(constants), grading=grading,
                    root=None if Path(root).resolve() == ROOT else Path(root))


def _bench(r: _Reader, table: dict) -> tuple[BenchSweep | None, str | None]:
    r.unknown(table, _BENCH_KEYS, "bench")
    unavailable = r.get(table, "unavailable", str, where="bench", required=False)
    if unavailable is not None:
        if len(table) > 1:
            raise r.error("bench.unavailable", "says there is no bench, so the table holds nothing else")
        return None, unavailable
    if "workload" not in table:
        raise r.error("bench", "needs `workload` and `sizes`, or `unavailable = \"why there is no bench\"`")
    sizes = r.get(table, "sizes", list, where="bench")
    if not sizes:
        raise r.error("bench.sizes", "is empty")
    for i, size in enumerate(sizes):
        if not isinstance(size, dict) or not size or not all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size.values()):
            raise r.error(f"bench.sizes[{i}]", "must be a table of positive integers ({ m = 4096, n = 1024 })")
    x_key = r.get(table, "x_key", str, where="bench")
    for i, size in enumerate(sizes):
        if x_key not in size:
            raise r.error(f"bench.sizes[{i}]", f"has no {x_key!r}, the `x_key` of the plot")
    dtype = r.get(table, "dtype", str, where="bench", required=False, default="float32")
    if dtype not in BENCH_DTYPES:
        raise r.error("bench.dtype", f"must be one of {', '.join(BENCH_DTYPES)}, not {dtype!r}")
    return BenchSweep(workload=r.get(table, "workload", str, where="bench"), sizes=tuple(dict(s) for s in sizes),
                      x_key=x_key, x_label=r.get(table, "x_label", str, where="bench"), dtype=dtype,
                      compile=r.get(table, "compile", bool, where="bench", required=False, default=False),
                      note=r.get(table, "note", str, where="bench", required=False, default="")), None


def _traffic(r: _Reader, table: dict | None) -> dict[str, tuple[int, int]] | None:
    if table is None:
        return None
    traffic = {}
    for name, value in table.items():
        if not (isinstance(value, list) and len(value) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)):
            raise r.error(f"expected_traffic.{name}", f"must be [bytes loaded, bytes stored], not {value!r}")
        traffic[name] = (value[0], value[1])
    return traffic


def _grading(r: _Reader, table: dict, chapters: tuple[str, ...]) -> Grading:
    r.unknown(table, _GRADING_KEYS, "grading")
    default = Grading()
    weights = dict(default.weights)
    given = r.get(table, "weights", dict, where="grading", required=False, default={})
    r.unknown(given, set(FAMILIES), "grading.weights")
    for name in given:
        weight = r.get(given, name, (int, float), where="grading.weights")
        if weight < 0:
            raise r.error(f"grading.weights.{name}", f"must be 0 or more, not {weight}")
        weights[name] = float(weight)
    if not any(weights.values()):
        raise r.error("grading.weights", "gives every family 0: a score needs at least one weight above 0")
    lessons = r.get(table, "lessons", list, where="grading", required=False, default=list(default.lessons))
    for i, name in enumerate(lessons):
        if not isinstance(name, str) or not name.isidentifier():
            raise r.error(f"grading.lessons[{i}]", f"must name a check (a spec's test without `test_`), not {name!r}")
        if name in PERFORMANCE_CHECKS:
            raise r.error(f"grading.lessons[{i}]", f"names {name!r}, which is the performance family's check")
    teaches = r.get(table, "teaches", dict, where="grading", required=False, default={})
    for key in teaches:
        if not key.isidentifier():
            raise r.error(f"grading.teaches.{key}", "must be keyed by a check, a failure kind (masking) or a family")
        chapter = r.get(teaches, key, str, where="grading.teaches")
        if chapter not in chapters:
            raise r.error(f"grading.teaches.{key}", f"is {chapter!r}, not one of the exercise's `chapters` "
                                                   f"({', '.join(chapters) or 'none'})")
    leaderboard = r.get(table, "leaderboard", str, where="grading", required=False, default=default.leaderboard)
    margin = r.get(table, "rank_margin", (int, float), where="grading", required=False, default=default.rank_margin)
    if not 0 <= margin < 1:
        raise r.error("grading.rank_margin", f"must be a fraction between 0 and 1, not {margin}")
    return Grading(weights=weights, lessons=tuple(lessons), teaches=dict(teaches), leaderboard=leaderboard,
                   rank_margin=float(margin))


def manifests(root: Path = ROOT) -> list[Path]:
    """Every exercise folder's manifest under ``root``, in folder order."""
    base = Path(root) / EXERCISES_FOLDER
    return sorted(p / MANIFEST for p in base.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))) \
        if base.is_dir() else []


def load(root: Path = ROOT) -> tuple[Exercise, ...]:
    """Every exercise of the course at ``root``, in order; CatalogueError for the first problem."""
    exercises = []
    for path in manifests(root):
        if not path.is_file():
            shown = path.relative_to(root).as_posix()
            raise CatalogueError(f"{shown} is missing: every folder under {EXERCISES_FOLDER}/ needs its manifest")
        exercises.append(read_manifest(path, root))
    exercises.sort(key=lambda e: e.number)
    numbers = [e.number for e in exercises]
    if numbers != list(range(1, len(numbers) + 1)):
        raise CatalogueError(f"{EXERCISES_FOLDER}/ numbers its exercises {numbers}: they must run 1, 2, 3, ... "
                             "with no gap and no repeat")
    return tuple(exercises)


@functools.cache
def _course() -> tuple[tuple[Exercise, ...], CatalogueError | None]:
    try:
        return load(), None
    except CatalogueError as exc:
        return (), exc


def exercises() -> tuple[Exercise, ...]:
    """Every exercise of this course, in order: read from the manifests on the first call, then kept.
    Empty when a manifest does not read (`load_error` says why)."""
    return _course()[0]


def load_error() -> CatalogueError | None:
    """Why the course's own manifests could not be read (None when they could): `grade check-course`
    says it, every other command stops on it."""
    return _course()[1]


def __getattr__(name: str) -> Any:
    """``catalogue.EXERCISES`` and ``catalogue.LOAD_ERROR``, read on first use rather than at import."""
    if name == "EXERCISES":
        return exercises()
    if name == "LOAD_ERROR":
        return load_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get(number: int) -> Exercise:
    """The exercise with this number; KeyError with the valid range otherwise."""
    if load_error() is not None:
        raise load_error()
    for exercise in exercises():
        if exercise.number == number:
            return exercise
    raise KeyError(f"there is no exercise {number}: the course has exercises 1 to {len(exercises())}")


def of_spec(spec_file: str | Path) -> Exercise:
    """The exercise whose folder holds ``spec_file`` (a spec's ``__file__``): for the values a spec needs
    while pytest collects it, before any fixture exists (``of_spec(__file__).constants["MAX_COLS"]``)."""
    folder = Path(spec_file).resolve().parent
    for exercise in exercises():
        if exercise.folder.resolve() == folder:
            return exercise
    raise CatalogueError(f"{spec_file} is in no exercise folder of {EXERCISES_FOLDER}/")
