"""The site's lists of exercises come from the catalogue, never from a copy kept by hand.

* The nav (mkdocs.yml completed by docs/scripts/nav_hook.py) lists every exercise page in the
  catalogue's order, titled "N. short title", and every page it lists exists; the learner's nav has no
  solution page and no API reference, the instructor's edition both, in order.
* mkdocs.yml, the exercises index, the home page and the README hold no list of exercises of their own.
* The tables rendered by docs/scripts/exercise_tables.py have one row per exercise, with links that resolve.
"""

from __future__ import annotations

import posixpath
import re

import pytest

import site_helpers as helpers
from docs.scripts import exercise_tables, nav_hook
from grader import catalogue
from site_helpers import DOCS, ROOT

EXERCISES = catalogue.EXERCISES


@pytest.fixture(scope="module")
def nav() -> list:
    return helpers.load_nav()


def section(nav: list, title: str) -> list:
    return exercise_tables.nav_section(nav, title)


def titled(entries: list) -> list[tuple[str, str]]:
    return [next(iter(entry.items())) for entry in entries if isinstance(entry, dict)]


def test_the_exercises_section_lists_every_exercise_in_order(nav):
    entries = section(nav, "Exercises")
    assert entries[0] == "exercises/index.md", "the Exercises section opens with its index page"
    assert titled(entries) == [(f"{e.number}. {exercise_tables.nav_title(e)}", e.docs_page) for e in EXERCISES]


def test_the_learners_nav_has_no_solution_and_no_api_reference(nav):
    pages = helpers.nav_pages(nav)
    assert not [page for page in pages if page.startswith(("solutions/", "reference/"))], pages
    titles = [next(iter(item)) for item in nav if isinstance(item, dict)]
    assert "Solutions" not in titles and nav_hook.REFERENCE_TITLE not in titles


def test_the_instructors_edition_adds_solutions_after_exercises_and_the_api_reference():
    nav = helpers.load_nav("mkdocs-instructor.yml")
    titles = [next(iter(item)) for item in nav if isinstance(item, dict)]
    assert titles.index("Solutions") == titles.index("Exercises") + 1
    expected = [(f"{e.number}. {exercise_tables.nav_title(e)}", exercise_tables.solution_page(e)) for e in EXERCISES]
    assert titled(section(nav, "Solutions")) == expected
    reference = section(nav, nav_hook.REFERENCE_TITLE)
    assert reference[0] == "reference/index.md"
    index = (DOCS / "reference" / "index.md").read_text()
    modules = titled(reference)
    assert len(modules) == index.count("| [grader.") and modules[0] == ("grader.catalogue", "reference/catalogue.md")
    assert all((DOCS / page).is_file() for _, page in modules)
    on_disk = {f"reference/{p.name}" for p in (DOCS / "reference").glob("*.md")} - {"reference/index.md"}
    assert {page for _, page in modules} == on_disk, "a reference page is missing from docs/reference/index.md's table"


def test_nav_titles_are_the_short_titles_the_site_shows(nav):
    titles = dict((page, title) for title, page in titled(section(nav, "Exercises")))
    assert titles["exercises/ex03_softmax.md"] == "3. Fused softmax"
    assert titles["exercises/ex10_cross_entropy.md"] == "10. Cross-entropy, 128k vocabulary"
    for exercise in EXERCISES:
        short = exercise_tables.nav_title(exercise)
        assert short and "\n" not in short and len(short) <= 40, f"exercise {exercise.number}'s nav title: {short!r}"


def test_every_page_in_the_nav_exists(nav):
    missing = [page for page in helpers.nav_pages(nav) if not (DOCS / page).is_file()]
    assert not missing, f"the nav lists pages that do not exist: {missing}"


def test_the_instructors_solution_pages_show_each_solution_and_its_commentary():
    for exercise in EXERCISES:
        page = nav_hook.solution_markdown(exercise)
        assert f'--8<-- "{exercise.solution_file}"' in page and '!!! warning "Read this after you pass"' in page
        assert f"grade solution {exercise.number}" in page
    with_notes = nav_hook.solution_markdown(EXERCISES[1], "## Why flat\n\nBecause.")
    assert with_notes.index("--8<--") < with_notes.index("## Why flat")


def test_mkdocs_yml_lists_no_exercise_by_hand():
    text = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^hooks:\s*\n\s*-\s*docs/scripts/nav_hook\.py\s*$", text, flags=re.MULTILINE)
    assert not re.findall(r"(?:exercises|solutions)/ex\d\d_\w+\.md", text), \
        "mkdocs.yml names exercise pages: the nav hook adds them from the catalogue"


def test_the_hook_refuses_entries_written_by_hand_and_can_run_twice():
    nav = [{"Exercises": ["exercises/index.md", {"3. Softmax": "exercises/ex03_softmax.md"}]}]
    with pytest.raises(nav_hook.NavError, match="lists pages by hand"):
        nav_hook.fill_nav(nav)
    nav = [{"Exercises": ["exercises/index.md"]}]
    once = nav_hook.fill_nav(nav)
    assert nav_hook.fill_nav([dict(item) for item in once]) == once
    with pytest.raises(nav_hook.NavError, match="no section 'Exercises'"):
        nav_hook.fill_nav([{"Chapters": []}])
    with pytest.raises(nav_hook.NavError, match="only the instructor's edition"):
        nav_hook.fill_nav([{"Exercises": []}, {"Solutions": []}])


# ------------------------------------------------------------------------------------------------
# The tables and counts
# ------------------------------------------------------------------------------------------------


def links(markdown: str, page: str) -> list[str]:
    """The targets of a Markdown table's links, relative to docs/."""
    return [posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
            for target in re.findall(r"\]\(([^)#]+)\)", markdown)]


def rows(markdown: str) -> list[int]:
    return [int(n) for n in re.findall(r"^\|\s*(\d+)\s*\|", markdown, flags=re.MULTILINE)]


def test_the_exercise_table_has_a_row_per_exercise_whose_links_resolve():
    table = exercise_tables.exercise_table("exercises/index.md")
    assert rows(table) == [e.number for e in EXERCISES]
    targets = links(table, "exercises/index.md")
    for exercise in EXERCISES:
        assert exercise.docs_page in targets
        assert all(chapter in targets for chapter in exercise_tables.chapters(exercise))
    assert all((DOCS / target).is_file() for target in targets), targets
    assert "| 1 | [Vector add](ex01_vector_add.md) | the tail mask, the byte model | `add(x, y)` | " \
           "[chapter 1](../chapters/01_memory_bound.md), [3](../chapters/03_masking.md) |" in table


def test_the_path_table_has_every_chapter_and_every_exercise_once(nav):
    table = exercise_tables.path_table(nav, {"chapters/03_masking.md": ": six wrong kernels"})
    chapters = [page for _, page in exercise_tables.chapter_pages(nav)]
    targets = links(table, "index.md")
    assert [t for t in targets if t.startswith("chapters/")] == chapters
    assert sorted(t for t in targets if t.startswith("exercises/")) == sorted(e.docs_page for e in EXERCISES)
    assert all((DOCS / target).is_file() for target in targets)
    assert "[Masking pitfalls](chapters/03_masking.md): six wrong kernels |" in table
    with pytest.raises(LookupError, match="chapters the nav does not have"):
        exercise_tables.path_table(nav, {"chapters/99_missing.md": "!"})


def test_counts_follow_the_catalogue_and_the_nav(nav):
    assert exercise_tables.exercise_count("digits") == str(len(EXERCISES))
    assert exercise_tables.number_text(10, "Word") == "Ten" and exercise_tables.number_text(42) == "42"
    assert exercise_tables.chapter_count(nav, "digits") == str(len(section(nav, "Chapters")))


def test_pages_render_their_lists_instead_of_keeping_them():
    index = (DOCS / "exercises" / "index.md").read_text()
    assert "{{ exercise_table() }}" in index and not rows(index)
    home = (DOCS / "index.md").read_text()
    assert "{{ path_table(" in home and not rows(home)
    spelled = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) "
                         r"(?:exercises|chapters)\b", re.IGNORECASE)
    for page in sorted(DOCS.rglob("*.md")):
        found = spelled.findall(page.read_text())
        assert not found, f"{page.relative_to(ROOT)} counts by hand ({found[0]!r}): use exercise_count()"


def test_readme_points_at_the_list_instead_of_copying_it():
    readme = (ROOT / "README.md").read_text()
    assert not rows(readme), "README.md has a table of exercises: the site's exercises page and `grade list` have it"
    assert "grade list" in readme and "Exercises page" in readme


def test_every_manifest_fills_the_exercise_tables():
    """The tables read nav_title, you_learn, chapters and you_write from each manifest: an exercise
    without one would stop the build, so say which manifest lacks what."""
    missing = [f"{exercise.folder.relative_to(ROOT)}/exercise.toml has no `{name}`"
               for exercise in EXERCISES for name in ("nav_title", "you_learn", "chapters", "you_write")
               if not getattr(exercise, name)]
    assert not missing, "\n".join(missing)
    for exercise in EXERCISES:
        for chapter in exercise.chapters:
            assert (DOCS / chapter).is_file(), f"exercise {exercise.number} names a missing chapter: {chapter}"
