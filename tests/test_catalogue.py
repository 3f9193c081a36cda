"""The catalogue is the manifests: each exercise folder's exercise.toml read, checked field by field, and a
broken one refused with a sentence naming the file and the field."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from grader import catalogue
from grader.catalogue import CatalogueError

EX3 = catalogue.get(3)
SHOWN = "grader/exercises/ex03_softmax/exercise.toml"


def test_every_folder_is_one_exercise_in_order():
    folders = sorted(p.name for p in (catalogue.ROOT / catalogue.EXERCISES_FOLDER).iterdir()
                     if p.is_dir() and not p.name.startswith("_"))
    assert [e.stem for e in catalogue.EXERCISES] == folders
    assert [e.number for e in catalogue.EXERCISES] == list(range(1, len(folders) + 1))


def test_an_exercise_knows_its_folder_and_files():
    assert EX3.folder == catalogue.ROOT / "grader" / "exercises" / "ex03_softmax"
    assert EX3.manifest == EX3.folder / "exercise.toml" and EX3.spec_file == EX3.folder / "spec.py"
    assert EX3.spec_module == "grader.exercises.ex03_softmax.spec"
    assert (EX3.wrong_dir, EX3.natural_dir, EX3.hostile_dir) == (EX3.folder / "wrong", EX3.folder / "natural",
                                                                  EX3.folder / "hostile")
    assert (EX3.learner_file, EX3.solution_file, EX3.docs_page) == (
        "exercises/ex03_softmax.py", "solutions/ex03_softmax.py", "exercises/ex03_softmax.md")
    assert EX3.function == "softmax" and EX3.floor == 0.80 and EX3.nav_title == "Fused softmax"
    assert EX3.floor_measurement == ("docs/measurements/h200-ex03-softmax.json", "rows")
    assert EX3.chapters == ("chapters/04_fused_softmax.md",) and EX3.you_learn
    assert EX3.bench.sizes[-1] == {"m": 4096, "n": 32768} and EX3.expected_traffic == {
        "x": (5 * 781 * 4, 0), "out": (0, 5 * 781 * 4)}


def test_the_site_titles_and_tables_have_what_they_need():
    """The nav, the exercise tables and the path table read these fields of every manifest."""
    nav = [e.nav_title for e in catalogue.EXERCISES]
    assert len(set(nav)) == len(nav), "two exercises share a nav title"
    for e in catalogue.EXERCISES:
        assert e.nav_title.strip() and len(e.nav_title) <= len(e.title), e.stem
        assert e.you_learn and e.chapters, e.stem
        assert all((catalogue.ROOT / "docs" / chapter).is_file() for chapter in e.chapters), e.stem


def test_a_spec_reads_its_constants_from_the_manifest():
    from grader.exercises.ex09_rmsnorm import spec

    assert spec.MAX_COLS == catalogue.get(9).constants["MAX_COLS"] == 16384
    assert catalogue.of_spec(spec.__file__) == catalogue.get(9)


def test_an_unknown_number_names_the_range():
    last = catalogue.EXERCISES[-1].number
    with pytest.raises(KeyError) as caught:
        catalogue.get(last + 1)
    assert caught.value.args[0].endswith(f"the course has exercises 1 to {last}")


@pytest.fixture
def manifest(tmp_path) -> Path:
    """A copy of exercise 3's folder (manifest only) in a course of its own."""
    folder = tmp_path / catalogue.EXERCISES_FOLDER / "ex03_softmax"
    folder.mkdir(parents=True)
    shutil.copy(EX3.manifest, folder / "exercise.toml")
    return folder / "exercise.toml"


def _broken(manifest: Path, old: str, new: str) -> str:
    text = manifest.read_text()
    assert old in text, old
    manifest.write_text(text.replace(old, new, 1))
    with pytest.raises(CatalogueError) as caught:
        catalogue.read_manifest(manifest, manifest.parents[3])
    return str(caught.value)


def test_the_copy_reads_as_the_original(manifest):
    copy = catalogue.read_manifest(manifest, manifest.parents[3])
    assert copy == EX3 and copy.root == manifest.parents[3]


@pytest.mark.parametrize("old,new,sentence", [
    ('title = "Fused softmax: one read, one write"\n', "", "`title` is missing"),
    ("number = 3", "number = 4", "`number` is 4, but the folder ex03_softmax says 3"),
    ('slug = "softmax"', 'slug = "soft"', "`slug` is 'soft', but the folder ex03_softmax says 'softmax'"),
    ('function = "softmax"', 'function = "soft max"', "`function` must be a Python name, not 'soft max'"),
    ('function = "softmax"', "function = 3", "`function` must be a string, not an integer"),
    ("fraction = 0.8", "fraction = 80", "`floor.fraction` must be a fraction of the ceiling between 0 and 1, not 80"),
    ("measurement = {", "measured = {", "`floor.measured` is not a field the catalogue knows"),
    (', key = "rows" }', " }", "`floor.measurement.key` is missing"),
    ("hints = [", "hints = [], old_hints = [", "is not valid TOML"),
    ('workload = "softmax"', 'unavailable = "no"\nworkload = "softmax"',
     "`bench.unavailable` says there is no bench, so the table holds nothing else"),
    ('x_key = "n"', 'x_key = "rows"', "`bench.sizes[0]` has no 'rows', the `x_key` of the plot"),
    ("{ m = 4096, n = 256 }", "{ m = 4096, n = -1 }", "`bench.sizes[0]` must be a table of positive integers"),
    ("x = [15620, 0]", "x = [15620]", "`expected_traffic.x` must be [bytes loaded, bytes stored], not [15620]"),
    ('chapters = ["chapters/04_fused_softmax.md"]', 'chapters = ["chapter 4"]',
     "`chapters[0]` must be a page path relative to docs/"),
])
def test_a_broken_field_is_named_with_its_file(manifest, old, new, sentence):
    message = _broken(manifest, old, new)
    assert message.startswith(SHOWN), message
    assert sentence in message, message


def test_a_floor_without_its_measurement_is_refused(manifest):
    text = manifest.read_text()
    line = next(line for line in text.splitlines() if line.startswith("measurement = "))
    message = _broken(manifest, line + "\n", "")
    assert message.startswith(f"{SHOWN}: `floor.measurement` is missing: the floor 0.8 needs the measurement"), message


def test_a_folder_without_a_manifest_and_a_gap_in_the_numbers_are_refused(manifest):
    root = manifest.parents[3]
    with pytest.raises(CatalogueError, match=r"numbers its exercises \[3\]: they must run 1, 2, 3"):
        catalogue.load(root)
    (manifest.parents[1] / "ex01_vector_add").mkdir()
    with pytest.raises(CatalogueError, match="grader/exercises/ex01_vector_add/exercise.toml is missing"):
        catalogue.load(root)


def test_the_catalogue_module_needs_only_the_standard_library():
    """The site's scripts load grader/catalogue.py by path, without the rest of the grader."""
    import ast

    tree = ast.parse((catalogue.ROOT / "grader" / "catalogue.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported - {"tomli"} <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)


def test_importing_the_catalogue_reads_no_manifest(monkeypatch):
    """The manifests are read on the first question, not at import: a fresh copy of the module, with
    its manifest reader counting, reads nothing until EXERCISES is asked for, then reads each once."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("catalogue_fresh", catalogue.__file__)
    fresh = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "catalogue_fresh", fresh)
    spec.loader.exec_module(fresh)
    reads = []
    real = fresh.read_manifest
    monkeypatch.setattr(fresh, "read_manifest", lambda *a, **k: reads.append(a[0]) or real(*a, **k))
    assert [e.stem for e in fresh.EXERCISES] == [e.stem for e in catalogue.exercises()]
    assert len(reads) == len(fresh.manifests())
    assert fresh.get(1).number == 1 and fresh.LOAD_ERROR is None
    assert len(reads) == len(fresh.manifests())  # kept, not read again
