"""Every grader module, function and file the course's pages name exists: a page that names
`grader.harness.child` after it is gone sends a reader to nothing. Dotted names are resolved by
importing the longest module prefix and reading the rest as attributes; paths must exist."""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Pages that walk through a made-up exercise, and its folder name: its files do not exist.
EXAMPLES = {"docs/contributing.md": "ex11_layer_norm"}
#: Recorded outputs of earlier runs quote the paths of their day.
RECORDS = ("docs/measurements/", "tests/hostile/TODAY")
DOTTED = re.compile(r"(?<![\w./-])grader(?:\.\w+)+")
PATH = re.compile(r"(?<![\w.-])grader/[\w./-]+")


def pages() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [page for page in listed.stdout.split() if not page.startswith(RECORDS)]


def resolves(name: str) -> bool:
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def stale_names(page: str, text: str) -> list[str]:
    example = EXAMPLES.get(page)
    names = [m.group(0) for m in DOTTED.finditer(text) if not resolves(m.group(0))]
    paths = [m.group(0).rstrip(".") for m in PATH.finditer(text)]
    names += [p for p in paths if "NN" not in p and not (ROOT / p).exists()]
    return sorted({n for n in names if not (example and example in n)})


@pytest.mark.parametrize("page", pages())
def test_a_page_names_only_modules_and_files_that_exist(page):
    stale = stale_names(page, (ROOT / page).read_text())
    assert not stale, f"{page} names what no longer exists (renamed or gone?): {stale}"


def test_a_stale_name_is_found():
    text = "`python -m grader.harness.child`, `grader.judge.clock.sets_for`, grader/learner/runner.py, grader/old_flat_module.py"
    assert stale_names("docs/x.md", text) == ["grader.harness.child", "grader/old_flat_module.py"]
