"""The site's lists of exercises, rendered from the exercises' manifests (read by grader/catalogue.py) when the
site is built.

The nav's Exercises section (and the instructor's edition's Solutions section: docs/scripts/nav_hook.py),
the table of docs/exercises/index.md (`{{ exercise_table() }}`), the home page's path
(`{{ path_table(...) }}`), every sentence that counts the exercises (`{{ exercise_count() }}`) and each
exercise page's stub (`{{ stub() }}`, docs/scripts/committed_stub.py) read the same list, so adding an
exercise adds it everywhere and no page keeps a copy to update by hand.

Relative links are computed from the page the table is on, so a table may move without breaking them.
"""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from docs.scripts import committed_stub  # noqa: E402
from grader import catalogue  # noqa: E402

#: The nav section titles filled from the catalogue, and the page each exercise has in them. The
#: learner's site has the first; the instructor's edition (mkdocs-instructor.yml) both.
NAV_SECTIONS = {
    "Exercises": lambda exercise: exercise.docs_page,
    "Solutions": lambda exercise: solution_page(exercise),
}
LEARNER_SECTIONS = ("Exercises",)


def _field(exercise, name: str):
    value = getattr(exercise, name)
    if not value:
        manifest = (exercise.folder / "exercise.toml").relative_to(ROOT)
        raise LookupError(f"exercise {exercise.number} has no `{name}`: add it to {manifest}")
    return value


def nav_title(exercise) -> str:
    """The short title of the nav and the tables: "Fused softmax"."""
    return _field(exercise, "nav_title")


def you_learn(exercise) -> str:
    """What the exercise teaches, in a phrase."""
    return _field(exercise, "you_learn")


def chapters(exercise) -> list[str]:
    """The chapters that teach the exercise, paths relative to docs/."""
    return list(_field(exercise, "chapters"))


def you_write(exercise) -> str:
    """What the learner writes, as the exercises index shows it (Markdown)."""
    return _field(exercise, "you_write")


# ------------------------------------------------------------------------------------------------


def exercises() -> tuple:
    return catalogue.EXERCISES


def solution_page(exercise) -> str:
    """The instructor's edition's page with the reference solution, relative to docs/: solutions/
    beside exercises/. The learner's site has no such page (docs/scripts/nav_hook.py)."""
    return exercise.docs_page.replace("exercises/", "solutions/", 1)


def nav_entries(section: str) -> list[dict[str, str]]:
    """The nav entries of a section NAV_SECTIONS names: ``[{"3. Fused softmax": "exercises/ex03_softmax.md"}, ...]``."""
    page = NAV_SECTIONS[section]
    return [{f"{exercise.number}. {nav_title(exercise)}": page(exercise)} for exercise in exercises()]


def _link(target: str, page: str) -> str:
    """`target` (relative to docs/) as a link from `page` (relative to docs/)."""
    return posixpath.relpath(target, posixpath.dirname(page) or ".")


_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
                 "nineteen", "twenty")


def number_text(count: int, form: str = "word") -> str:
    """`form`: "word" (ten), "Word" (Ten, to open a sentence) or "digits" (10)."""
    if form not in ("word", "Word", "digits"):
        raise ValueError(f"unknown number form {form!r}: use 'word', 'Word' or 'digits'")
    if form == "digits" or count >= len(_NUMBER_WORDS):
        return str(count)
    word = _NUMBER_WORDS[count]
    return word.capitalize() if form == "Word" else word


def exercise_count(form: str = "word") -> str:
    """How many exercises the course has: `{{ exercise_count("Word") }} exercises` renders "Ten exercises"."""
    return number_text(len(exercises()), form)


def chapter_number(path: str) -> int:
    """A chapter's number, from its file name: chapters/04_fused_softmax.md -> 4."""
    match = re.fullmatch(r"(\d+)_.*\.md", posixpath.basename(path))
    if not match:
        raise ValueError(f"{path} is not named NN_slug.md, so its chapter number is unknown")
    return int(match[1])


def exercise_table(page: str = "exercises/index.md") -> str:
    """The exercises index: number, page, what the learner writes and the chapters that teach it (one may
    come after the exercise: chapter 3 returns to exercise 1's masks once exercise 2 is done)."""
    lines = ["| # | exercise | you learn | you write | its chapters |", "|---|---|---|---|---|"]
    for exercise in exercises():
        reads = [f"[{'chapter ' if i == 0 else ''}{chapter_number(c)}]({_link(c, page)})"
                 for i, c in enumerate(chapters(exercise))]
        lines.append(f"| {exercise.number} | [{nav_title(exercise)}]({_link(exercise.docs_page, page)}) | "
                     f"{you_learn(exercise)} | {you_write(exercise)} | {', '.join(reads)} |")
    return "\n".join(lines)


def nav_section(nav: list, title: str) -> list:
    """The entries of the top-level nav section `title`."""
    for item in nav:
        if isinstance(item, dict) and title in item:
            return item[title]
    raise LookupError(f"mkdocs.yml's nav has no section {title!r}")


def chapter_pages(nav: list) -> list[tuple[str, str]]:
    """(title without its number, page) of each chapter in the nav's Chapters section, in order."""
    found = []
    for entry in nav_section(nav, "Chapters"):
        if isinstance(entry, dict):
            (title, page), = entry.items()
            found.append((re.sub(r"^\d+\.\s*", "", title), page))
    return found


def chapter_count(nav: list, form: str = "word") -> str:
    return number_text(len(chapter_pages(nav)), form)


def path_table(nav: list, notes: dict[str, str] | None = None, page: str = "index.md") -> str:
    """The home page's path: each chapter of the nav, then the exercises that start from it (an exercise
    sits beside the first chapter it asks you to read). `notes` adds words after a chapter's link, keyed by
    the chapter's page: ``{"chapters/03_masking.md": ": six wrong kernels and what the grader says"}``."""
    notes = dict(notes or {})
    lines = ["| # | chapter | then write |", "|---|---|---|"]
    by_chapter: dict[str, list] = {}
    for exercise in exercises():
        by_chapter.setdefault(chapters(exercise)[0], []).append(exercise)
    pages = chapter_pages(nav)
    unknown = (set(notes) | set(by_chapter)) - {path for _, path in pages}
    if unknown:
        raise LookupError(f"the path table names chapters the nav does not have: {sorted(unknown)}")
    for title, path in pages:
        write = ", ".join(f"[{nav_title(e)}]({_link(e.docs_page, page)})" for e in by_chapter.get(path, []))
        lines.append(f"| {chapter_number(path)} | [{title}]({_link(path, page)}){notes.get(path, '')} | {write} |")
    return "\n".join(lines)


def define_macros(env) -> None:
    """Register the macros with mkdocs-macros (called from docs/scripts/figures.py's `define_env`)."""

    def current_page(default: str) -> str:
        page = getattr(env, "page", None)
        return page.file.src_uri if page is not None and getattr(page, "file", None) else default

    env.macro(lambda: exercise_table(current_page("exercises/index.md")), "exercise_table")
    env.macro(exercise_count, "exercise_count")
    env.macro(lambda form="word": chapter_count(env.conf["nav"], form), "chapter_count")
    env.macro(lambda notes=None: path_table(env.conf["nav"], notes, current_page("index.md")), "path_table")
    committed_stub.define_macros(env)
