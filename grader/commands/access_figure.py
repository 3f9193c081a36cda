"""Drawing an access map as a PNG or SVG with matplotlib (`grade show N --out FILE`).

The figure draws the same cells as the terminal (`grader.commands.access_layout`), with the same
colours (`grader.commands.access_terminal.PALETTE`): one colour per program, red for what was touched
outside a tensor, a red outline and ``?`` for output elements nobody wrote, the number of
touches where an element was touched more than once. Runs of equal cells are drawn as one
rectangle, so an SVG stays small, and the SVG is deterministic (no date, fixed ids): the same
map always gives the same file.
"""

from __future__ import annotations

from pathlib import Path

from grader.commands.access_layout import Cell, Grid, program_grid, tensor_grids
from grader.learner.access_map import AccessMap
from grader.commands.access_terminal import LOUD, PALETTE, glyph, launch_words

__all__ = ["FORMATS", "save"]

#: File name endings `save` writes.
FORMATS = (".png", ".svg")

_CELL = 0.11  # inches per cell
_LABEL = 0.85  # inches left of the cells, for row labels
_LINE = 0.19  # inches per line of text
_FILL = {"untouched": "#f3f3f3", "gap": "#dcdcdc", "guard": "#c4c4c4", "unwritten": "#ffffff", "outside": LOUD}
_TEXT = {"loud": LOUD, "note": "#8a6d00", "ok": "#2f7d32"}
_MARK = {"loud": "✗ ", "note": "• ", "ok": "✓ "}


def _fill(cell: Cell) -> str:
    if cell.state in ("once", "repeated"):
        return PALETTE[cell.program % len(PALETTE)] if cell.program >= 0 else "#999999"
    return _FILL[cell.state]


def _look(cell: Cell) -> tuple[str, str]:
    """What a cell looks like: its fill and its mark (unwritten cells look alike whoever wrote beside them)."""
    mark = glyph(cell) if cell.state in ("outside", "unwritten", "repeated", "once") else ""
    return _fill(cell), mark


def _runs(row: list[Cell]):
    """(first column, length, cell) for each run of cells that look the same."""
    start = 0
    for column in range(1, len(row) + 1):
        if column == len(row) or _look(row[column]) != _look(row[start]):
            yield start, column - start, row[start]
            start = column


class _Canvas:
    """Stacks blocks of text and cells from the top, in inches; drawn at the end."""

    def __init__(self, width_cells: int):
        self.width = _LABEL + width_cells * _CELL + 0.2
        self.y = 0.1
        self.rects: list[tuple[float, float, float, float, str, str]] = []  # x, y, w, h, face, edge
        self.texts: list[tuple[float, float, str, dict]] = []

    def text(self, words: str, *, size: float = 8.0, color: str = "#222222", bold: bool = False,
             indent: float = 0.0) -> None:
        self.texts.append((0.1 + indent, self.y + _LINE * 0.7, words,
                           {"fontsize": size, "color": color, "fontweight": "bold" if bold else "normal"}))
        self.y += _LINE

    def grid(self, grid: Grid) -> None:
        self.text(grid.title, size=8.5, bold=True)
        notes = "; ".join(part for part in (grid.scale, grid.columns) if part)
        if notes:
            self.text(notes, size=6.5, color="#666666", indent=0.1)
        for label, row in zip(grid.labels, grid.rows):
            self.texts.append((_LABEL - 0.06, self.y + _CELL * 0.8, label,
                               {"fontsize": 5.5, "color": "#666666", "ha": "right"}))
            for start, length, cell in _runs(row):
                x = _LABEL + start * _CELL
                edge = LOUD if cell.state == "unwritten" else "none"
                self.rects.append((x, self.y, length * _CELL, _CELL * 0.88, _fill(cell), edge))
                mark = glyph(cell) if cell.state in ("outside", "unwritten", "repeated") else ""
                if cell.state == "once" and length >= 3:
                    mark = glyph(cell)
                if mark:
                    color = "#ffffff" if cell.state == "outside" else LOUD if cell.state == "unwritten" else "#111111"
                    self.texts.append((x + length * _CELL / 2, self.y + _CELL * 0.82, mark,
                                       {"fontsize": 5.5, "color": color, "ha": "center",
                                        "fontweight": "bold" if cell.state != "once" else "normal"}))
            self.y += _CELL
        if grid.more:
            self.text(grid.more, size=7, color=LOUD, indent=0.1)
        self.y += 0.04

    def draw(self, path: Path) -> None:
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle

        import matplotlib

        height = self.y + 0.1
        with matplotlib.rc_context({"svg.hashsalt": "access-map", "svg.fonttype": "none",
                                    "font.family": "DejaVu Sans"}):
            figure = Figure(figsize=(self.width, height))
            axes = figure.add_axes((0, 0, 1, 1))
            axes.set_xlim(0, self.width)
            axes.set_ylim(height, 0)
            axes.axis("off")
            for x, y, w, h, face, edge in self.rects:
                axes.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor=edge,
                                         linewidth=0.6 if edge != "none" else 0))
            for x, y, words, style in self.texts:
                axes.text(x, y, words, **style)
            kind = path.suffix.lower().lstrip(".")
            metadata = {"Date": None} if kind == "svg" else {}
            figure.savefig(path, format=kind, dpi=200, metadata=metadata)


def _legend(canvas: _Canvas, programs: int) -> None:
    canvas.y += 0.05
    canvas.text("legend", size=7.5, bold=True)
    entries = [(PALETTE[i % len(PALETTE)], "", f"program {i}") for i in range(min(programs, 4))]
    if programs > 4:
        entries.append(("#ffffff", "", "… (one colour each)"))
    entries += [(PALETTE[0], "2", "touched that many times"), (LOUD, "!", "outside the tensor"),
                ("#ffffff", "?", "never written"), (_FILL["untouched"], "", "never read"),
                (_FILL["gap"], "", "gap between rows"), (_FILL["guard"], "", "guard memory")]
    x = 0.1
    for face, mark, words in entries:
        width = 0.25 + 0.055 * len(words)
        if x + width > canvas.width - 0.1:
            canvas.y += _LINE
            x = 0.1
        edge = LOUD if mark == "?" else "#bbbbbb"
        canvas.rects.append((x, canvas.y + 0.03, _CELL, _CELL, face, edge))
        if mark:
            canvas.texts.append((x + _CELL / 2, canvas.y + 0.03 + _CELL * 0.82, mark,
                                 {"fontsize": 5.5, "ha": "center", "fontweight": "bold",
                                  "color": "#ffffff" if face == LOUD else LOUD if mark == "?" else "#111111"}))
        canvas.texts.append((x + _CELL + 0.05, canvas.y + 0.03 + _CELL * 0.85, words,
                             {"fontsize": 6.5, "color": "#333333"}))
        x += width
    canvas.y += _LINE


def save(amap: AccessMap, path: str | Path, *, title: str = "") -> Path:
    """Draw ``amap`` into ``path`` (.png or .svg); returns the path."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"--out takes a .png or .svg file, not {path.name}")
    canvas = _Canvas(64)
    if title:
        canvas.text(title, size=10, bold=True)
    if not amap.available:
        canvas.text(amap.reason, color=_TEXT["note"])
        canvas.draw(path)
        return path
    if amap.label:
        canvas.text(f"input: {amap.label}", size=7.5, color="#555555")
    for launch in amap.launches:
        canvas.text(f"launch: {launch_words(launch)}", size=7.5, color="#555555")
    findings = amap.findings()
    for finding in findings:
        if finding.tensor is None:
            canvas.text(_MARK[finding.severity] + finding.text, size=7.5, color=_TEXT[finding.severity])
    for tensor in amap.tensors:
        canvas.y += 0.08
        for grid in tensor_grids(amap, tensor):
            canvas.grid(grid)
            extra = program_grid(amap, tensor, grid.kind)
            if extra is not None:
                canvas.grid(extra)
        for finding in findings:
            if finding.tensor == tensor.name:
                canvas.text(_MARK[finding.severity] + finding.text, size=7, color=_TEXT[finding.severity],
                            indent=0.1)
    _legend(canvas, amap.program_count)
    path.parent.mkdir(parents=True, exist_ok=True)
    canvas.draw(path)
    return path
