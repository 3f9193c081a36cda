"""Drawing an access map in the terminal with rich, within 80 columns.

Each cell is one character. Its letter names the program that touched it (``a`` is program 0,
``b`` program 1, ... wrapping after ``z``) and its background is that program's colour, so the
map reads in colour and in plain text alike. The other glyphs:

* ``2``-``9``, ``+``: touched that many times (``+``: ten or more), on the first program's colour;
* ``!`` on red: touched outside the tensor (the guard regions around it, or the gaps between
  its rows): a load or store without the right mask or offset;
* ``?`` in red: an output element no program wrote;
* ``·`` an input element never read, ``:`` a gap between rows, ``=`` guard memory, untouched.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from grader.commands.access_layout import Cell, Grid, program_grid, tensor_grids
from grader.learner.access_map import AccessMap

__all__ = ["PALETTE", "LOUD", "glyph", "launch_words", "render"]

#: One colour per program, cycling (red is kept for what is loud). Shared with the figure.
PALETTE = ("#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f", "#a0cbe8")
#: Red: touched outside a tensor, or never written.
LOUD = "#d62728"
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_LABEL_WIDTH = 8


def glyph(cell: Cell) -> str:
    """The character a cell is drawn with (the same in colour and in plain text)."""
    if cell.state == "outside":
        return "!"
    if cell.state == "unwritten":
        return "?"
    if cell.state == "repeated":
        return "+" if cell.count >= 10 else str(cell.count)
    if cell.state == "once":
        return _LETTERS[cell.program % len(_LETTERS)]
    return {"untouched": "·", "gap": ":", "guard": "="}[cell.state]


def _style(cell: Cell) -> str:
    if cell.state == "outside":
        return f"bold white on {LOUD}"
    if cell.state == "unwritten":
        return f"bold {LOUD}"
    if cell.state in ("once", "repeated"):
        colour = PALETTE[cell.program % len(PALETTE)] if cell.program >= 0 else "grey50"
        return f"{'bold ' if cell.state == 'repeated' else ''}black on {colour}"
    return "grey50"


def _grid(grid: Grid, console: Console) -> None:
    console.print(Text(grid.title, style="bold"))
    notes = [part for part in (grid.scale, grid.columns) if part]
    if notes:
        console.print(Text("  " + "; ".join(notes), style="dim"))
    width = max([_LABEL_WIDTH] + [len(label) + 1 for label in grid.labels])
    for label, row in zip(grid.labels, grid.rows):
        line = Text()
        line.append(label.rjust(width - 1) + " ", style="dim")
        for cell in row:
            line.append(glyph(cell), style=_style(cell))
        console.print(line, no_wrap=True, overflow="crop")
    if grid.more:
        console.print(Text("  " + grid.more, style=f"bold {LOUD}"))


_MARKS = {"loud": ("✗ ", f"bold {LOUD}"), "note": ("• ", "yellow"), "ok": ("✓ ", "green")}


def _legend(console: Console, programs: int) -> None:
    sample = " ".join(_LETTERS[i] for i in range(min(programs, 4))) + (" …" if programs > 4 else "")
    line = Text()
    line.append("legend  ", style="bold")
    for i, letter in enumerate(sample.split(" ")):
        if letter == "…":
            line.append(" …")
            continue
        line.append(letter, style=_style(Cell("once", i, 1)))
        line.append(" ")
    line.append(" the program that touched it (a = program 0), one colour each")
    console.print(line)
    rows = [
        (Text("2", style=_style(Cell("repeated", 0, 2))), "-9, +  touched that many times (+: ten or more)"),
        (Text("!", style=_style(Cell("outside"))), "      touched outside the tensor: its guards or the gaps between rows"),
        (Text("?", style=_style(Cell("unwritten"))), "      an output element no program wrote"),
        (Text("· : =", style="grey50"), "  untouched: an input element, a gap between rows, guard memory"),
    ]
    for mark, words in rows:
        console.print(Text("        ").append(mark).append(words))


def launch_words(launch: dict) -> str:
    """"add_kernel[(2,)], 2 programs"."""
    grid = [g for g in launch["grid"]] or [0]
    while len(grid) > 1 and grid[-1] == 1:
        grid.pop()
    programs = 1
    for g in grid:
        programs *= g
    shape = "(" + ", ".join(str(g) for g in grid) + ("," if len(grid) == 1 else "") + ")"
    return f"{launch['kernel']}[{shape}], {programs} program{'s' if programs != 1 else ''}"


def render(amap: AccessMap, console: Console | None = None, *, title: str = "") -> None:
    """Print the map: a header, each tensor's grid with its findings, and a legend."""
    console = console or Console()
    if title:
        console.print(Text(title, style="bold"))
    if not amap.available:
        console.print(Text(amap.reason, style="yellow"))
        return
    if amap.label:
        console.print(Text(f"input: {amap.label}", style="dim"))
    for launch in amap.launches:
        console.print(Text(f"launch: {launch_words(launch)}", style="dim"))
    findings = amap.findings()
    for finding in findings:
        if finding.tensor is None:
            mark, style = _MARKS[finding.severity]
            console.print(Text(mark + finding.text, style=style))
    for tensor in amap.tensors:
        console.print()
        grids = tensor_grids(amap, tensor)
        for grid in grids:
            _grid(grid, console)
            extra = program_grid(amap, tensor, grid.kind)
            if extra is not None:
                _grid(extra, console)
        for finding in findings:
            if finding.tensor == tensor.name:
                mark, style = _MARKS[finding.severity]
                console.print(Text("  " + mark + finding.text, style=style))
    console.print()
    _legend(console, amap.program_count)
