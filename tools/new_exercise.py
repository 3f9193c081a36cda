"""Add an exercise from the template: one grader folder, one stub, one solution, one docs page.

    python -m tools.new_exercise SLUG --title "Title: what it is about" --function NAME [--nav-title T] [--root DIR]

Writes, for the next free number NN (or ``--number``):

* ``grader/exercises/exNN_SLUG/`` with ``__init__.py``, ``exercise.toml`` (the manifest) and ``spec.py``;
* ``exercises/exNN_SLUG.py`` (the stub) and ``solutions/exNN_SLUG.py`` (the solution);
* ``docs/exercises/exNN_SLUG.md`` (the page).

The template (``tools/exercise_template/``) is a working exercise: a 1-D copy whose solution passes
`grade exercise NN` and whose stub says "not implemented yet". The stub and the solution come from one
file, ``kernel.py``: a line ``#stub: TEXT`` is TEXT in the stub only, ``#solution: TEXT`` in the
solution only (at the marker's indentation). Replace its kernel, reference, sizes,
byte model, hints and page with the exercise's own, then run `grade check-course`. Nothing else in
the repository names an exercise: the catalogue, the CLI, the course's tests and the site read the
manifests.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "exercise_template"
#: Where each file goes, relative to the repository root: (template file, the part of kernel.py it keeps).
FILES = {
    "grader/exercises/{stem}/exercise.toml": ("exercise.toml", None),
    "grader/exercises/{stem}/spec.py": ("spec.py", None),
    "exercises/{stem}.py": ("kernel.py", "stub"),
    "solutions/{stem}.py": ("kernel.py", "solution"),
    "docs/exercises/{stem}.md": ("page.md", None),
}
MARKER = re.compile(r"^(\s*)#(stub|solution):(?: (.*))?$")


def keep(text: str, part: str | None) -> str:
    """``kernel.py``'s lines for ``part`` (``"stub"`` or ``"solution"``), markers removed."""
    if part is None:
        return text
    lines = []
    for line in text.splitlines():
        marked = MARKER.match(line)
        if marked is None:
            lines.append(line)
        elif marked.group(2) == part:
            lines.append(f"{marked.group(1)}{marked.group(3) or ''}".rstrip())
    return "\n".join(lines) + "\n"


def next_number(root: Path) -> int:
    numbers = [int(p.name[2:4]) for p in (root / "grader" / "exercises").glob("ex[0-9][0-9]_*") if p.is_dir()]
    return max(numbers, default=0) + 1


def rendered(number: int, slug: str, *, title: str, function: str, nav_title: str) -> dict[str, str]:
    """The template's files as written for this exercise, by path relative to the repository root
    (`grade check-course` compares an exercise with them to find text left from the template)."""
    stem = f"ex{number:02d}_{slug}"
    values = {"number": number, "slug": slug, "stem": stem, "title": title.replace('"', "'"),
              "nav_title": nav_title.replace('"', "'"), "function": function,
              "underline": "=" * len(f"Exercise {number} · {nav_title}")}
    return {target.format(stem=stem): keep(Template((TEMPLATE / name).read_text(encoding="utf-8")).substitute(values),
                                           part)
            for target, (name, part) in FILES.items()}


def create(root: Path, slug: str, *, title: str, function: str, nav_title: str | None = None,
           number: int | None = None) -> list[Path]:
    """Write the new exercise's files under ``root``; the paths written. ValueError with a sentence
    when a name is not usable or a file would be overwritten."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", slug):
        raise ValueError(f"the slug must be lower-case letters, digits and _ (like online_softmax), not {slug!r}")
    if not function.isidentifier():
        raise ValueError(f"the function must be a Python name, not {function!r}")
    number = number or next_number(root)
    files = rendered(number, slug, title=title, function=function, nav_title=nav_title or title.split(":")[0])
    existing = [relative for relative in files if (root / relative).exists()]
    if existing:
        raise ValueError(f"{', '.join(existing)} already exist: choose another slug or number")
    written = []
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    stem = f"ex{number:02d}_{slug}"
    init = root / "grader" / "exercises" / stem / "__init__.py"
    init.write_text("", encoding="utf-8")
    written.append(init)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.new_exercise", description=__doc__.split("\n\n")[0])
    parser.add_argument("slug", help="lower-case name, e.g. layer_norm")
    parser.add_argument("--title", required=True, help="the page's title, e.g. \"LayerNorm: ...\"")
    parser.add_argument("--function", required=True, help="the function the learner's file defines")
    parser.add_argument("--nav-title", default=None, help="the short title of the site's navigation")
    parser.add_argument("--number", type=int, default=None, help="default: the next free number")
    parser.add_argument("--root", type=Path, default=ROOT, help="the course checkout (default: this one)")
    args = parser.parse_args(argv)
    try:
        written = create(args.root, args.slug, title=args.title, function=args.function, nav_title=args.nav_title,
                         number=args.number)
    except ValueError as exc:
        print(f"new_exercise: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(args.root)}")
    print("Replace the template's kernel, reference, byte model, hints and page with the exercise's own, "
          "then run `grade check-course`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
