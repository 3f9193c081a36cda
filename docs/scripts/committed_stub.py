"""The stub an exercise page shows: the file as the course committed it, not the one being edited.

A learner builds the site in the checkout where they fill in `exercises/exNN_*.py`; including that
path would show their own half-written kernel as "the stub". `{{ stub() }}` on an exercise page
renders the stub from git's last commit (`git show HEAD:exercises/ex01_vector_add.py`) in a code
block titled with its path. Where there is no git history (a copy without `.git`, a file never
committed) it shows the working file and says so in the block's title.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grader import catalogue  # noqa: E402
from grader.commands import workspace

#: The code block's title when the text comes from the working file instead of git.
WORKING_COPY_NOTE = " (the file in your checkout: no git history here)"


class StubError(LookupError):
    """`{{ stub() }}` is on a page that is no exercise's page."""


def committed_text(path: str, root: Path = ROOT) -> str | None:
    """``path`` (relative to ``root``) as the last commit holds it (`grade reset`'s reader,
    `grader.commands.workspace.pristine`); None without git or that commit."""
    try:
        return workspace.pristine(root / path).decode("utf-8")
    except workspace.WorkspaceError:
        return None


def fenced(text: str, title: str) -> str:
    """``text`` as a Python code block; the fence is longer than any run of backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f'{fence}python title="{title}"\n{text.rstrip()}\n{fence}'


def stub_block(exercise, root: Path = ROOT) -> str:
    """The stub of ``exercise`` as a code block, from git where it can."""
    path = exercise.learner_file
    text = committed_text(path, root)
    if text is not None:
        return fenced(text, path)
    return fenced((root / path).read_text(encoding="utf-8"), path + WORKING_COPY_NOTE)


def exercise_of_page(page: str):
    """The exercise whose page is ``page`` (relative to docs/)."""
    for exercise in catalogue.EXERCISES:
        if exercise.docs_page == page:
            return exercise
    raise StubError(f"{{{{ stub() }}}} is on {page}, which is no exercise's page: only a page a "
                    "manifest names (docs_page) has a stub to show")


def define_macros(env) -> None:
    """Register `stub()` with mkdocs-macros (called from docs/scripts/figures.py's `define_env`)."""

    def stub() -> str:
        return stub_block(exercise_of_page(env.page.file.src_uri))

    env.macro(stub, "stub")
