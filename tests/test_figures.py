"""Every figure a page states comes from a measurement file, or says it is not a measurement.

A percentage, GB/s, TB/s, TFLOP/s, µs or speedup (2.47×) figure typed into a page's Markdown fails this test unless it is
* produced by `{{ m(file, key, fmt) }}` (docs/scripts/figures.py reads it from docs/measurements/), or
* marked `{{ ex("...") }}` (a worked example, a datasheet value, a threshold), or
* inside an admonition titled "Worked example", a code block, inline code or math.
The figure module itself is tested here too: a key a file lacks, or one that matches several rows, fails.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from site_helpers import DOCS

_spec = importlib.util.spec_from_file_location("figures", DOCS / "scripts" / "figures.py")
figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(figures)

PAGES = sorted(p for p in DOCS.rglob("*.md")
               if not p.is_relative_to(DOCS / "assets") and not p.is_relative_to(DOCS / "measurements"))

FIGURE = re.compile(r"(?<![\w.])[~≈]?\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|GB/s|TB/s|TFLOP/s|µs|us\b)"
                    r"|(?<![\w.])\d+\.\d+\s?×")  # and speedups: 2.47×


def unmarked_text(markdown: str) -> list[tuple[int, str]]:
    """The page's lines with everything that may hold a figure legitimately removed."""
    lines = markdown.splitlines()
    kept: list[tuple[int, str]] = []
    fence = None
    worked_indent = None
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if match:
            fence = match.group(1)
            continue
        if worked_indent is not None:
            if not stripped or indent > worked_indent:
                continue
            worked_indent = None
        if re.match(r'(!!!|\?\?\?\+?)\s+\w+\s+"Worked example', stripped):
            worked_indent = indent
            continue
        kept.append((number, line))
    text = "\n".join(f"{n}\x00{line}" for n, line in kept)
    text = re.sub(r"\{\{.*?\}\}", " ", text, flags=re.S)          # macros: m(...) and ex(...)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)          # display math
    text = re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]", " ", text, flags=re.S)  # inline math
    text = re.sub(r"`[^`\n]*`", " ", text)                        # inline code
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)           # comments
    text = re.sub(r"\]\([^)]*\)", "]", text)                      # link targets (file names)
    out = []
    for row in text.split("\n"):
        if "\x00" in row:
            number, line = row.split("\x00", 1)
            out.append((int(number), line))
    return out


def stray_figures(markdown: str) -> list[str]:
    return [f"line {number}: {found.group(0)!r} in {line.strip()[:120]!r}"
            for number, line in unmarked_text(markdown) for found in FIGURE.finditer(line)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_states_no_figure_outside_a_measurement(page):
    stray = stray_figures(page.read_text())
    assert not stray, (f"{page.relative_to(DOCS)} states figures that come from no measurement file. Render a "
                       "measurement with {{ m(file, key, fmt) }}, or mark a worked example with {{ ex(...) }}:\n"
                       + "\n".join(stray))


def test_the_detector_finds_typed_figures_and_spares_marked_ones():
    page = ('The kernel reached 87% of the copy, 3700 GB/s in 131 µs, 2.47× faster.\n'
            'Rendered: {{ m("h200-ex03-softmax.json", "meta.ceiling_gbps", "gbps") }}; '
            'datasheet {{ ex("4.8 TB/s", "datasheet") }}; code `4.8 TB/s`; math \\(50\\%\\).\n'
            '!!! note "Worked example"\n    A 4096 × 4096 fp32 copy at 4000 GB/s takes 33 µs.\n\n'
            'Attention at 384 TFLOP/s.\n')
    found = stray_figures(page)
    assert [f.split(":")[0] for f in found] == ["line 1"] * 4 + ["line 6"], found


def test_a_figure_reads_its_file_and_names_it():
    html = figures.measured("h200-ex03-softmax.json", "rows[kernel=solution,M=4096,N=32768,dtype=fp32].fraction",
                            "pct")
    value = figures.load("h200-ex03-softmax.json")
    row = next(r for r in value["rows"]
               if (r["kernel"], r["M"], r["N"], r["dtype"]) == ("solution", 4096, 32768, "fp32"))
    assert f">{100 * row['fraction']:.0f}%</abbr>" in html
    assert 'title="measured: docs/measurements/h200-ex03-softmax.json · rows[kernel=solution' in html


def test_a_rate_is_the_bytes_over_a_gpu_time_and_names_both_keys():
    bytes_key = "rows[kernel=solution,M=4096,N=4096,dtype=fp32].bytes"
    us_key = "calls[kernel=solution,N=4096,dtype=fp32].gpu_us_per_call"
    value = figures.load("h200-ex03-softmax.json")
    row = next(r for r in value["rows"]
               if (r["kernel"], r["M"], r["N"], r["dtype"]) == ("solution", 4096, 4096, "fp32"))
    call = next(c for c in value["calls"] if (c["kernel"], c["N"], c["dtype"]) == ("solution", 4096, "fp32"))
    gbps = row["bytes"] / (call["gpu_us_per_call"] * 1e-6) / 1e9
    assert f">{gbps:.0f} GB/s</abbr>" in figures.measured_rate("h200-ex03-softmax.json", bytes_key, us_key)
    html = figures.measured_rate("h200-ex03-softmax.json", bytes_key, us_key, "meta.ceiling_gbps", "pct")
    assert f">{100 * gbps / value['meta']['ceiling_gbps']:.0f}%</abbr>" in html
    assert bytes_key in html and us_key in html and "meta.ceiling_gbps" in html


def test_a_plain_value_is_a_bare_number_for_an_attribute():
    text = figures.plain_value("h200-ex03-softmax.json", "rows[kernel=solution,M=4096,N=4096,dtype=fp32].ms", 1000)
    row = next(r for r in figures.load("h200-ex03-softmax.json")["rows"]
               if (r["kernel"], r["M"], r["N"], r["dtype"]) == ("solution", 4096, 4096, "fp32"))
    assert float(text) == pytest.approx(row["ms"] * 1000) and re.fullmatch(r"[\d.e+-]+", text), text


@pytest.mark.parametrize("key, says", [
    ("rows[kernel=solution,N=32768].fraction", "matches 2 rows"),     # fp32 and bf16
    ("rows[kernel=nobody].fraction", "matches 0 rows"),
    ("meta.no_such_field", "has no 'no_such_field'"),
])
def test_a_key_the_file_cannot_answer_fails_with_a_sentence(key, says):
    with pytest.raises(figures.FigureError, match=re.escape(says)):
        figures.lookup("h200-ex03-softmax.json", key)


def test_a_missing_file_or_format_fails():
    with pytest.raises(figures.FigureError, match="does not exist"):
        figures.lookup("no-such-file.json", "meta")
    with pytest.raises(figures.FigureError, match="unknown figure format"):
        figures.render(0.5, "percent")


def _floor_reasons():
    catalogue = pytest.importorskip("grader.catalogue")
    return [(exercise.number, exercise.floor_reason) for exercise in catalogue.EXERCISES]


@pytest.mark.parametrize("number, reason", _floor_reasons(), ids=lambda v: str(v)[:20])
def test_floor_reasons_point_at_keys_their_files_hold(number, reason):
    """A floor reason names its measurement file and the rows behind it; each named row selection exists."""
    files = re.findall(r"(h200-[\w.-]+?\.json)", reason)
    selections = re.findall(r"(rows\[[^\]]*\])", reason)
    missing = []
    for selection in selections:
        found = False
        for file in files:
            if not (figures.MEASUREMENTS / file).is_file():
                continue
            try:
                figures.lookup(file, selection, many=True)
                found = True
            except figures.FigureError:
                pass
        if not found:
            missing.append(selection)
    assert not missing, f"exercise {number}'s floor reason names rows that none of {files} holds: {missing}"


def test_chapter_7_shows_the_measured_speedup_beside_the_prediction():
    text = (DOCS / "chapters" / "07_amdahl.md").read_text()
    paragraphs = text.split("\n\n")
    assert any("predicted_speedup" in p and "measured_speedup" in p for p in paragraphs), \
        "chapter 7 states the law's prediction without the measured speedup next to it"
