"""MkDocs hook (mkdocs.yml `hooks:`): the nav's Exercises and Solutions sections, from the catalogue.

mkdocs.yml keeps only what is not an exercise in those sections (the index page); this hook appends one
entry per exercise, "3. Fused softmax", in the catalogue's order (docs/scripts/exercise_tables.py).
tests/site_helpers.py's `load_nav` applies it too, so the tests see the nav the site has.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from docs.scripts import exercise_tables  # noqa: E402


class NavError(ValueError):
    """mkdocs.yml's nav cannot take the generated entries."""


def fill_nav(nav: list) -> list:
    """`nav` with each section of `exercise_tables.NAV_SECTIONS` filled, in place (and returned).

    A section may hold untitled pages (its index) before the generated entries; titled entries
    written by hand are refused, since the catalogue is the one list of exercises."""
    for title in exercise_tables.NAV_SECTIONS:
        section = next((item for item in nav if isinstance(item, dict) and title in item), None)
        if section is None:
            raise NavError(f"mkdocs.yml's nav has no section {title!r} for the exercises to go in")
        entries = section[title] or []
        kept = [entry for entry in entries if isinstance(entry, str)]
        generated = exercise_tables.nav_entries(title)
        written = [entry for entry in entries if not isinstance(entry, str)]
        if written and written != generated:
            raise NavError(f"mkdocs.yml's nav section {title!r} lists pages by hand ({written[0]}): "
                           "its exercise entries come from the catalogue, so leave only its index page there")
        section[title] = kept + generated
    return nav


def on_config(config):
    from mkdocs.exceptions import PluginError

    try:
        fill_nav(config["nav"])
    except NavError as error:
        raise PluginError(str(error)) from None
    return config
