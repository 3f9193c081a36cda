"""Every chapter is a lesson: short enough to read at one sitting, ending at its exercise, with the
measurements behind it in its lab notes.

* **At most 2,500 words of lesson.** What counts is what a reader reads as prose: the page's Markdown
  with fenced code blocks, snippet includes (`--8<--`), HTML comments and HTML tags (figures, the
  calculators' markup) removed; a figure macro (`{{ m(...) }}`, `{{ ex(...) }}`, ...) and a formula
  (`\\( ... \\)`, `\\[ ... \\]`) count one word each, whatever their source spells; admonitions
  ("Pitfalls") and tables count, since they are part of the lesson. A word is a run of non-space
  characters holding a letter or a digit (a table's pipes are not words).
* **Lab notes beside their chapter.** `docs/lab-notes/NN_slug.md` belongs to the chapter whose file
  starts with the same `NN_`; the chapter links it, and it links back to the chapter.
* **A chapter ends at its exercise.** Its exercise is the first one in the catalogue
  (`grader.catalogue.EXERCISES`, read from the manifests) whose `chapters` name it; the chapter's last
  paragraph links that exercise's page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader import catalogue
from site_helpers import DOCS

MAX_LESSON_WORDS = 2500
CHAPTERS = sorted((DOCS / "chapters").glob("*.md"))
LAB_NOTES = sorted((DOCS / "lab-notes").glob("*.md"))


def lesson_words(markdown: str) -> int:
    """The words of lesson in a page's Markdown, by the rule of this module's docstring."""
    text = re.sub(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", " ", markdown, flags=re.S | re.M)
    text = re.sub(r"^.*--8<--.*$", " ", text, flags=re.M)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\{\{.*?\}\}", " FIGURE ", text, flags=re.S)
    text = re.sub(r"\\\[.*?\\\]|\\\(.*?\\\)", " FORMULA ", text, flags=re.S)
    text = re.sub(r"<[^>\n]+>", " ", text)
    return sum(1 for word in text.split() if re.search(r"\w", word))


def number(page: Path) -> str:
    return page.name.split("_", 1)[0]


def chapter_path(chapter: Path) -> str:
    return chapter.relative_to(DOCS).as_posix()


def links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", markdown)


def links_page(markdown: str, page: str) -> bool:
    """Whether the Markdown links `page` (a path relative to docs/), from a page one folder down."""
    return any(link.split("#", 1)[0] == f"../{page}" for link in links(markdown))


def last_paragraph(markdown: str) -> str:
    return [part for part in re.split(r"\n\s*\n", markdown.strip()) if part.strip()][-1]


def test_the_word_count_follows_its_rule():
    page = ("# Title\n\nTwo words, {{ m(\"f.json\", \"rows[kernel=a b c].ms\", \"us\") }} and \\(a + b = c\\).\n\n"
            "```python\nx = not counted at all\n```\n\n<!-- nor this -->\n\n| a | b |\n|---|---|\n| c | d |\n\n"
            '<figure markdown>\n<figcaption>Caption words</figcaption>\n</figure>\n\n--8<-- "x.py"\n')
    # Title, Two, words, FIGURE, and, FORMULA; a, b, c, d; Caption, words.
    assert lesson_words(page) == 12


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_a_chapter_is_at_most_a_lesson_long(chapter):
    words = lesson_words(chapter.read_text())
    assert words <= MAX_LESSON_WORDS, (
        f"{chapter_path(chapter)} holds {words} words of lesson, more than {MAX_LESSON_WORDS}: move sweeps, "
        f"probes and tuning detail to docs/lab-notes/{chapter.name} and link it from the chapter's end")


@pytest.mark.parametrize("notes", LAB_NOTES, ids=lambda p: p.name)
def test_lab_notes_and_their_chapter_link_each_other(notes):
    chapters = [c for c in CHAPTERS if number(c) == number(notes)]
    assert len(chapters) == 1, f"docs/lab-notes/{notes.name} belongs to no chapter {number(notes)}_*.md"
    chapter = chapters[0]
    notes_path = notes.relative_to(DOCS).as_posix()
    assert links_page(chapter.read_text(), notes_path), f"{chapter_path(chapter)} does not link {notes_path}"
    assert links_page(notes.read_text(), chapter_path(chapter)), f"{notes_path} does not link back to its chapter"


def exercise_of(chapter: Path) -> catalogue.Exercise:
    exercises = [e for e in catalogue.EXERCISES if chapter_path(chapter) in e.chapters]
    assert exercises, f"no exercise manifest lists {chapter_path(chapter)} among its chapters"
    return exercises[0]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_a_chapter_ends_at_its_exercise(chapter):
    exercise = exercise_of(chapter)
    ending = last_paragraph(chapter.read_text())
    assert links_page(ending, exercise.docs_page), (
        f"{chapter_path(chapter)} must end at its exercise: its last paragraph links no "
        f"{exercise.docs_page} (exercise {exercise.number}, whose manifest lists the chapter)")


def test_the_catalogue_assigns_every_exercise_a_chapter_page_that_exists():
    for exercise in catalogue.EXERCISES:
        for page in exercise.chapters:
            assert (DOCS / page).is_file(), f"exercise {exercise.number} lists {page}, which does not exist"


LAB_WORDS = re.compile(r"tools/device/|tools/benchmarks/|\b\w+-sweep\b(?!\.json)|\bconfiguration (?:the solution )?had before\b"
                       r"|\bthe configuration before\b|Pearson")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_a_lesson_speaks_no_lab_notes_vocabulary(chapter):
    found = [f"line {n}: {m.group(0)!r}" for n, line in enumerate(chapter.read_text().splitlines(), 1)
             for m in LAB_WORDS.finditer(line)]
    assert not found, (f"{chapter_path(chapter)} names tool paths, sweeps or past configurations; they belong "
                       f"in its lab notes:\n" + "\n".join(found))
