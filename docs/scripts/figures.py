"""Measured figures on the site's pages, read from docs/measurements/*.json when the site is built.

A page never types a measured number. It writes

    {{ m("h200-ex03-softmax.json", "rows[kernel=solution,M=4096,N=32768,dtype=fp32].fraction", "pct") }}

and the build renders `93%`, with the file and the key in a tooltip, so the page, the plots and the
measurement file cannot disagree. `{{ ratio(file, key_a, key_b) }}` renders a speedup of two figures of
one file; `{{ rate(file, bytes_key, us_key, ceiling_key, "pct") }}` a bandwidth (or its fraction of a
ceiling) from a byte count and a GPU time; `{{ value(file, key, 1000) }}` a bare number for an HTML
attribute; `{{ span(file, "rows[kernel=tile]", "fraction") }}` the range of a field over several rows;
`{{ floor(3) }}` exercise 3's performance floor, from grader/catalogue.py. A figure that is not a measurement (a worked example, a datasheet
value, a threshold of the grader, plain arithmetic) is written `{{ ex("4.8 TB/s", "datasheet") }}`, so a
reader (and tests/test_figures.py) can tell the two apart.

Keys are dotted paths into the JSON. `rows[kernel=solution,N=4096]` picks the one element of the list
`rows` whose fields have those values (compared as text); a key that matches no row, or several, fails
the build with a sentence naming the file and the key. `rows.3` indexes a list.

The lists of exercises (`{{ exercise_table() }}`, `{{ path_table(notes) }}`, `{{ exercise_count() }}`,
`{{ chapter_count() }}`) are rendered from the catalogue by docs/scripts/exercise_tables.py.

This module is the `mkdocs-macros-plugin` module of mkdocs.yml; of the grader it reads only the catalogue.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from pathlib import Path

MEASUREMENTS = Path(__file__).resolve().parents[1] / "measurements"

_SEGMENT = re.compile(r"^(?P<name>[^\[\]]*)(?:\[(?P<filter>[^\]]*)\])?$")


class FigureError(LookupError):
    """A page asked for a figure its measurement file does not hold."""


@lru_cache(maxsize=None)
def load(file: str) -> object:
    path = MEASUREMENTS / file
    if not path.is_file():
        raise FigureError(f"docs/measurements/{file} does not exist; a page names it in a figure")
    return json.loads(path.read_text())


def _segments(key: str) -> list[str]:
    """Split on dots that are outside brackets: `rows[a=1.5].ms` -> [`rows[a=1.5]`, `ms`]."""
    parts, depth, current = [], 0, ""
    for char in key:
        depth += char == "["
        depth -= char == "]"
        if char == "." and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def lookup(file: str, key: str, many: bool = False) -> object:
    """The value at `key` in docs/measurements/`file`; with `many`, the last filter may match several
    rows, and the list of them is returned."""
    node = load(file)
    segments = _segments(key)
    for position, segment in enumerate(segments):
        match = _SEGMENT.match(segment)
        if not match:
            raise FigureError(f"docs/measurements/{file}: cannot read the key {key!r} at {segment!r}")
        name, wanted = match["name"], match["filter"]
        if name:
            if isinstance(node, list) and name.isdigit():
                node = node[int(name)]
            elif isinstance(node, dict) and name in node:
                node = node[name]
            else:
                raise FigureError(f"docs/measurements/{file} has no {name!r} where {key!r} looks for it")
        if wanted is not None:
            pairs = [pair.split("=", 1) for pair in re.split(r",(?=[\w.]+=)", wanted) if pair]
            if not isinstance(node, list) or any(len(pair) != 2 for pair in pairs):
                raise FigureError(f"docs/measurements/{file}: {segment!r} in {key!r} must filter a list by field=value")
            rows = [row for row in node if isinstance(row, dict)
                    and all(field in row and _text(row[field]) == value for field, value in pairs)]
            if many and position == len(segments) - 1 and rows:
                return rows
            if len(rows) != 1:
                raise FigureError(f"docs/measurements/{file}: {segment!r} in {key!r} matches {len(rows)} rows, "
                                  "not one; name more fields")
            node = rows[0]
    return node


def render(value: object, fmt: str) -> str:
    """The value as a page shows it. `pct`: a fraction as a whole percentage; `pct1`: one decimal; `pts`: a difference of fractions in percentage points;
    `ms`, `us`: a time in milliseconds shown in ms or µs; `gbps`, `tbps`, `tflops`: with their unit;
    `x`, `x3`: a ratio with two or three decimals; `int`; `f1`, `f2`: fixed decimals; `raw`: as stored."""
    if fmt == "raw":
        return _text(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise FigureError(f"the value {value!r} is not a number, so the format {fmt!r} cannot show it")
    formats = {
        "pct": lambda v: f"{100 * v:.0f}%",
        "pct1": lambda v: f"{100 * v:.1f}%",
        "pts": lambda v: f"{100 * v:.1f} points",
        "ms": lambda v: f"{v:.3g} ms" if v < 1 else f"{v:.2f} ms",
        "us": lambda v: f"{1000 * v:.0f} µs" if v >= 0.01 else f"{1000 * v:.1f} µs",
        "gbps": lambda v: f"{v:.0f} GB/s",
        "tbps": lambda v: f"{v / 1000:.2f} TB/s",
        "tflops": lambda v: f"{v:.0f} TFLOP/s",
        "x": lambda v: f"{v:.2f}×",
        "x3": lambda v: f"{v:.3f}×",
        "int": lambda v: f"{v:.0f}",
        "f1": lambda v: f"{v:.1f}",
        "f2": lambda v: f"{v:.2f}",
    }
    if fmt not in formats:
        raise FigureError(f"unknown figure format {fmt!r}; use one of {', '.join(['raw', *formats])}")
    return formats[fmt](value)


def measured(file: str, key: str, fmt: str = "raw") -> str:
    """HTML for one measured figure: the number, with its file and key in the tooltip."""
    title = html.escape(f"measured: docs/measurements/{file} · {key}", quote=True)
    return f'<abbr class="measured" title="{title}">{html.escape(render(lookup(file, key), fmt))}</abbr>'


def measured_ratio(file: str, numerator: str, denominator: str, fmt: str = "x") -> str:
    """HTML for the ratio of two figures of one file (a speedup: the slower time over the faster)."""
    value = lookup(file, numerator) / lookup(file, denominator)
    title = html.escape(f"measured: docs/measurements/{file} · {numerator} / {denominator}", quote=True)
    return f'<abbr class="measured" title="{title}">{html.escape(render(value, fmt))}</abbr>'


def measured_rate(file: str, bytes_key: str, us_key: str, ceiling_key: str | None = None,
                  fmt: str = "gbps") -> str:
    """HTML for a bandwidth worked out from a byte count and a time in µs of one file (a profiler's GPU
    time beside the wall time do_bench measured); with `ceiling_key`, as a fraction of that ceiling."""
    value = lookup(file, bytes_key) / (lookup(file, us_key) * 1e-6) / 1e9
    keys = f"{bytes_key} / {us_key} µs"
    if ceiling_key is not None:
        value /= lookup(file, ceiling_key)
        keys += f" / {ceiling_key}"
    title = html.escape(f"measured: docs/measurements/{file} · {keys}", quote=True)
    return f'<abbr class="measured" title="{title}">{html.escape(render(value, fmt))}</abbr>'


def plain_value(file: str, key: str, scale: float = 1.0) -> str:
    """A measured number as bare text, for an HTML attribute (a calculator's default input), times
    `scale` (1000 turns ms into µs); six significant digits."""
    return f"{lookup(file, key) * scale:.6g}"


def measured_span(file: str, rows_key: str, field: str, fmt: str = "pct") -> str:
    """HTML for the lowest and highest `field` over the rows `rows_key` selects ("76%–90%")."""
    values = [row[field] for row in lookup(file, rows_key, many=True) if row.get(field) is not None]
    if not values:
        raise FigureError(f"docs/measurements/{file}: no row of {rows_key!r} has {field!r}")
    text = f"{render(min(values), fmt)}–{render(max(values), fmt)}"
    title = html.escape(f"measured: docs/measurements/{file} · {field} over {rows_key} ({len(values)} rows)",
                        quote=True)
    return f'<abbr class="measured" title="{title}">{html.escape(text)}</abbr>'


def _exercise_tables():
    """docs/scripts/exercise_tables.py, imported with the repository on the path (it imports grader.catalogue)."""
    import sys

    root = str(MEASUREMENTS.parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    from docs.scripts import exercise_tables

    return exercise_tables


def _catalogue():
    """grader.catalogue, where the floors live."""
    return _exercise_tables().catalogue


def floor(number: int) -> str:
    """HTML for exercise `number`'s performance floor, read from the catalogue the grader uses."""
    exercise = _catalogue().get(number)
    if exercise.floor is None:
        raise FigureError(f"exercise {number} has no bandwidth floor in its manifest ({exercise.stem}/exercise.toml)")
    title = html.escape(f"the grader's floor: grader/exercises/{exercise.stem}/exercise.toml", quote=True)
    return f'<abbr class="floor" title="{title}">{100 * exercise.floor:.0f}%</abbr>'


def worked(text: str, why: str = "worked example") -> str:
    """HTML for a figure that is not a measurement: a worked example, a datasheet value, a threshold."""
    title = html.escape(f"{why}, not a measurement", quote=True)
    return f'<span class="worked-example" title="{title}">{html.escape(text)}</span>'


def define_env(env) -> None:
    """The mkdocs-macros entry point: `m(file, key, fmt)`, `ratio(file, key, key, fmt)`, `rate`, `value`, `span`, `floor`,
    `ex(text, why)` and the exercise lists of docs/scripts/exercise_tables.py."""
    env.macro(measured, "m")
    env.macro(measured_ratio, "ratio")
    env.macro(measured_rate, "rate")
    env.macro(plain_value, "value")
    env.macro(measured_span, "span")
    env.macro(floor, "floor")
    env.macro(worked, "ex")
    _exercise_tables().define_macros(env)
    from docs.scripts import gpu_plans  # on the path now: _exercise_tables put the repository there

    gpu_plans.define_macros(env)
