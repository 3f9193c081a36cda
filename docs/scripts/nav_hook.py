"""MkDocs hook (mkdocs.yml `hooks:`): the nav's exercise sections, and which edition is built.

mkdocs.yml keeps only what is not an exercise in the Exercises section (its index page); this hook
appends one entry per exercise, "3. Fused softmax", in the catalogue's order
(docs/scripts/exercise_tables.py). tests/site_helpers.py's `load_nav` applies it too, so the tests
see the nav the site has.

The learner's site (mkdocs.yml) carries no solution text: the pages under docs/solutions/ are
dropped before anything reads them, so no nav entry, search entry or link can reach them (a link
to one fails the strict build). The API reference is built but stays out of the sidebar
(contributing.md links its index).

The instructor's edition (mkdocs-instructor.yml: `extra: {instructor: true}`) adds a Solutions
section after Exercises, one page per exercise, and the API reference's section in the order of
docs/reference/index.md's table. A solution page is the solution file behind a warning, followed by
docs/solutions/exNN_slug.md where that file exists (commentary, such as exercise 2's measured
alternatives): an exercise needs no page of its own to be in the instructor's edition.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from docs.scripts import exercise_tables  # noqa: E402

SOLUTIONS_FOLDER = "solutions/"
REFERENCE_INDEX = "reference/index.md"
REFERENCE_TITLE = "API reference"
#: Where the instructor's sections go: after this section, in this order.
INSTRUCTOR_SECTIONS_AFTER = {"Solutions": "Exercises", REFERENCE_TITLE: "Measurements and plots"}


class NavError(ValueError):
    """mkdocs.yml's nav cannot take the generated entries."""


def is_instructor_edition(config) -> bool:
    """True for mkdocs-instructor.yml's build (`extra: {instructor: true}`)."""
    return bool((config.get("extra") or {}).get("instructor"))


def _section(nav: list, title: str):
    return next((item for item in nav if isinstance(item, dict) and title in item), None)


def _fill(section: dict, title: str) -> None:
    entries = section[title] or []
    kept = [entry for entry in entries if isinstance(entry, str)]
    generated = exercise_tables.nav_entries(title)
    written = [entry for entry in entries if not isinstance(entry, str)]
    if written and written != generated:
        raise NavError(f"mkdocs.yml's nav section {title!r} lists pages by hand ({written[0]}): "
                       "its exercise entries come from the catalogue, so leave only its index page there")
    section[title] = kept + generated


def reference_entries(docs: Path = ROOT / "docs") -> list:
    """The API reference's index, then one entry per module its table links, in the table's order."""
    index = (docs / REFERENCE_INDEX).read_text(encoding="utf-8")
    modules = re.findall(r"^\|\s*\[([\w.]+)\]\(([\w.]+\.md)\)", index, flags=re.MULTILINE)
    return [REFERENCE_INDEX] + [{name: f"reference/{page}"} for name, page in modules]


def fill_nav(nav: list, instructor: bool = False) -> list:
    """`nav` with the Exercises section filled, in place (and returned); for the instructor's edition
    also the Solutions and API reference sections, each placed after the section it follows.

    A section may hold untitled pages (its index) before the generated entries; titled entries
    written by hand are refused, since the catalogue is the one list of exercises."""
    for title in exercise_tables.LEARNER_SECTIONS:
        section = _section(nav, title)
        if section is None:
            raise NavError(f"mkdocs.yml's nav has no section {title!r} for the exercises to go in")
        _fill(section, title)
    for title in exercise_tables.NAV_SECTIONS:
        if title not in exercise_tables.LEARNER_SECTIONS and _section(nav, title) is not None:
            raise NavError(f"mkdocs.yml's nav has a section {title!r}: only the instructor's edition "
                           "(mkdocs-instructor.yml) has it, and the hook adds it there")
    if instructor:
        for title, after in INSTRUCTOR_SECTIONS_AFTER.items():
            entries = reference_entries() if title == REFERENCE_TITLE else exercise_tables.nav_entries(title)
            previous = _section(nav, after)
            if previous is None:
                raise NavError(f"mkdocs.yml's nav has no section {after!r} for {title!r} to follow")
            nav.insert(nav.index(previous) + 1, {title: entries})
    return nav


def solution_markdown(exercise, commentary: str = "") -> str:
    """The instructor's page for ``exercise``: the solution file behind a warning, then ``commentary``."""
    n = exercise.number
    page = f"""# Solution to exercise {n}: {exercise.title}

!!! warning "Read this after you pass"
    This is the course's reference solution to [exercise {n}](../{exercise.docs_page}). If
    `grade exercise {n}` does not pass yet, go back: the grader's messages point at what to
    change, and `grade hint {n}` gives the next hint. In a terminal, `grade solution {n}` shows it
    once the file passes.

```python title="{exercise.solution_file}"
--8<-- "{exercise.solution_file}"
```
"""
    return page + (f"\n{commentary.strip()}\n" if commentary.strip() else "")


def on_config(config):
    from mkdocs.exceptions import PluginError

    try:
        fill_nav(config["nav"], instructor=is_instructor_edition(config))
    except NavError as error:
        raise PluginError(str(error)) from None
    return config


def on_files(files, config):
    """The learner's site: every page under docs/solutions/ dropped. The instructor's edition: one
    solution page per exercise, with the commentary of docs/solutions/ where there is one."""
    from mkdocs.structure.files import File

    commentary = {}
    for file in list(files):
        if file.src_uri.startswith(SOLUTIONS_FOLDER):
            if file.is_documentation_page():
                commentary[file.src_uri] = Path(file.abs_src_path).read_text(encoding="utf-8")
            files.remove(file)
    if is_instructor_edition(config):
        for exercise in exercise_tables.exercises():
            page = exercise_tables.solution_page(exercise)
            files.append(File.generated(config, page,
                                        content=solution_markdown(exercise, commentary.get(page, ""))))
    return files
