"""How `grade solution N` shows a reference: its commentary, then its code, every line whole.

In a terminal the code is highlighted, with line numbers; a line wider than the terminal goes on
under its number on as many rows as it needs, each marked with `CONTINUED` in the gutter, so no
character is cropped. Piped or redirected, every line is printed whole, as it is in the file, for
the reader's own tools to wrap. `write_html` writes the same as one local page (its style inside,
nothing fetched) for a browser.
"""

from __future__ import annotations

import html
from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text

#: The gutter mark of a row that continues the numbered line above it.
CONTINUED = "↪"
THEME = "ansi_dark"


def code_rows(code: str, width: int) -> list[Text]:
    """The highlighted code as rows of at most ``width`` cells: `` 12 │ text`` for each line's
    first row and ``    ↪ rest`` for the rows it continues on."""
    # highlight() ends the text with a newline of its own: keep the file's lines, no more.
    lines = Syntax(code, "python", theme=THEME).highlight(code).split("\n", allow_blank=True)[:len(code.splitlines())]
    digits = len(str(max(1, len(lines))))
    gutter = digits + 3  # "12 │ "
    room = max(8, width - gutter)
    rows: list[Text] = []
    for number, line in enumerate(lines, start=1):
        head = Text(f"{number:>{digits}} │ ", style="dim")
        start = 0
        while True:
            piece = line[start:start + room]
            rows.append(head + piece)
            start += room
            if start >= len(line.plain):
                break
            head = Text(f"{CONTINUED:>{digits}}   ", style="dim")
    return rows


def render(console: Console, *, title: str, commentary: str, code: str) -> None:
    """Commentary (Markdown) then the code, each line whole: wrapped with a mark in a terminal,
    printed as it is otherwise."""
    if commentary:
        console.print(Markdown(commentary))
        console.print()
    console.print(Text(title, style="bold"), soft_wrap=True)
    if console.is_terminal:
        for row in code_rows(code, console.width):
            console.print(row, no_wrap=True, overflow="ignore", crop=False)
    else:
        for line in code.splitlines():
            console.print(Text(line), soft_wrap=True)


def write_html(path: Path, *, title: str, commentary: str, code: str) -> None:
    """One self-contained page: the commentary as HTML, the code highlighted with line numbers."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    formatter = HtmlFormatter(linenos="table", cssclass="highlight", wrapcode=True)
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }}
pre, code {{ font-family: ui-monospace, monospace; font-size: 0.9rem; }}
.highlight pre {{ white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }}
.highlighttable {{ border-collapse: collapse; width: 100%; }}
.highlighttable td.linenos {{ color: #888; padding-right: 1rem; vertical-align: top; user-select: none; }}
{formatter.get_style_defs(".highlight")}
</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<section class="commentary">
{_commentary_html(commentary)}
</section>
<section class="code">
{highlight(code, PythonLexer(), formatter)}
</section>
</body>
</html>
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")


def _commentary_html(commentary: str) -> str:
    """The commentary through Python-Markdown where it is installed (it comes with the site's tools),
    else as preformatted text."""
    if not commentary:
        return ""
    try:
        import markdown
    except ImportError:
        return f"<pre>{html.escape(commentary)}</pre>"
    return markdown.markdown(commentary, extensions=["fenced_code", "tables"])
