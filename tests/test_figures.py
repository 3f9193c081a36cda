"""Every figure a page states comes from a measurement file, or says it is not a measurement.

A percentage, GB/s, TB/s, TFLOP/s, µs or speedup (2.47×) figure typed into a page's Markdown fails this test unless it is
* produced by `{{ m(file, key, fmt) }}` (docs/scripts/figures.py reads it from docs/measurements/), or
* marked `{{ ex("...") }}` (a worked example, a datasheet value, a threshold), or
* inside an admonition titled "Worked example", a code block, inline code or math.
The figure module itself is tested here too: a key a file lacks, or one that matches several rows, fails.

The plots (docs/scripts/plot_measurements.py) obey the same rule and physics: no point above the ceiling it
is drawn against, every figure names its source files, each figure draws from one run, legends stay short.
"""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

import site_helpers as helpers
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


# ------------------------------------------------------------------------------------------------
# The plots: physics, provenance, one run each, legible
# ------------------------------------------------------------------------------------------------

@pytest.fixture
def plotted(committed_plots):
    module, _ = committed_plots
    assert module.PLOTTED, "the plot script recorded no bandwidth point"
    return module


def points_above_their_ceilings(points: list[dict]) -> list[str]:
    """Points drawn above the measured ceiling or the spec peak they were drawn against, or with none."""
    return [f"{p['figure']} {p['series']} ({p['file']}, {p['shape']}): {p['value']:.4g} against ceiling "
            f"{p['ceiling']} and spec {p['spec']}" for p in points
            if p["ceiling"] is None or p["value"] > p["ceiling"] or (p["spec"] is not None and p["value"] > p["spec"])]


def test_no_plotted_point_is_above_its_ceiling(plotted):
    """A bandwidth above the measured ceiling (the better of a copy and an add) is a byte model that counts
    bytes the memory never moved, or a wrong measurement: no figure may draw one, flagged or not."""
    wrong = points_above_their_ceilings(plotted.PLOTTED)
    assert not wrong, "points above their ceiling:\n" + "\n".join(wrong)


def _benchmark_file(folder, name, rows, *, run="2000-01-01T00:00:00Z", ceiling=1000.0, spec=1100.0):
    meta = {"gpu": "Synthetic GPU", "torch": "0", "triton": "0", "date": "2000-01-01", "run": run,
            "ceiling_gbps": ceiling, "spec_gbps": spec}
    (folder / name).write_text(json.dumps({"meta": meta, "rows": rows}))


def _add_rows(gbps_at_largest):
    return [{"kernel": "solution", "n": n, "dtype": "fp32", "bytes": 12 * n, "ms": 12 * n / (g * 1e6), "gbps": g}
            for n, g in ((1 << 20, 400.0), (1 << 24, gbps_at_largest))]


def test_a_point_above_its_ceiling_is_caught(tmp_path):
    """The check above fails on a file whose byte model credits more than the memory can move."""
    data = tmp_path / "data"
    data.mkdir()
    _benchmark_file(data, "mine-ex01-vector-add.json", _add_rows(1050.0))  # ceiling 1000, spec 1100
    module = helpers.run_plot_script(data, tmp_path / "plots")
    wrong = points_above_their_ceilings(module.PLOTTED)
    assert len(wrong) == 1 and "1050" in wrong[0], wrong
    _benchmark_file(data, "mine-ex01-vector-add.json", _add_rows(1200.0), ceiling=1300.0)  # above the spec only
    module = helpers.run_plot_script(data, tmp_path / "plots")
    assert len(points_above_their_ceilings(module.PLOTTED)) == 1


def test_every_plot_names_its_source(committed_plots):
    """Each figure says in itself which files it was drawn from (a footer), and SOURCES.md lists them."""
    _, out = committed_plots
    sources = (out / "SOURCES.md").read_text()
    for svg in sorted(out.glob("*.svg")):
        files = re.search(rf"^\| `{re.escape(svg.name)}` \| (.*) \|$", sources, re.M)
        assert files, f"SOURCES.md has no row for {svg.name}"
        names = re.findall(r"`([^`]+\.json)`", files.group(1))
        assert names, f"{svg.name} names no measurement file"
        text = svg.read_text()
        footer = re.search(r"source: ([^<]*)", text)
        assert footer and all(name in text for name in names), f"{svg.name} does not name {names} in the figure"


def test_each_plot_draws_from_one_run(plotted):
    """A comparison on one figure comes from one run: every source shares its meta.run (a file without one
    is a run of its own, so it may only stand alone)."""
    mixed = {name: runs for name, runs in plotted.RUNS.items() if len(set(runs)) > 1}
    assert not mixed, f"figures drawn from several runs: {mixed}"


def test_a_plot_never_mixes_two_runs(tmp_path):
    """The size figure joins the add probe and exercise 3's sweep only when they come from one run."""
    data = tmp_path / "data"
    data.mkdir()
    softmax = [{"kernel": k, "M": m, "N": 4096, "dtype": "fp32", "bytes": 8 * m * 4096, "ms": 1.0, "gbps": 500.0,
                "fraction": 0.5} for k in ("solution", "persistent", "online") for m in (256, 4096)]
    adds = [{"kernel": "empty_like", "n": n, "dtype": "fp32", "bytes": 12 * n, "ms": 1.0, "gbps": 600.0}
            for n in (1 << 20, 1 << 24)]
    _benchmark_file(data, "mine-ex03-softmax.json", softmax, run="run-a")
    _benchmark_file(data, "mine-zeros-like.json", adds, run="run-b")
    module = helpers.run_plot_script(data, tmp_path / "plots")
    assert module.RUNS["bandwidth_vs_size.svg"] == ["run-a"]
    _benchmark_file(data, "mine-zeros-like.json", adds, run="run-a")
    module = helpers.run_plot_script(data, tmp_path / "plots")
    assert module.RUNS["bandwidth_vs_size.svg"] == ["run-a", "run-a"]


def test_legends_are_short_and_tick_labels_apart(plotted):
    """A reader matches at most about six look-alike entries by colour; more go to panels or direct labels."""
    long = {name: n for name, n in plotted.LEGEND_ENTRIES.items() if n > 6}
    assert not long, f"legends of more than six entries: {long}"
    crowded = {name: found for name, found in plotted.TICKS_OVERLAPPING.items() if found}
    assert not crowded, f"overlapping tick labels: {crowded}"


def test_no_plotted_series_joins_points_of_different_shape_families(plotted):
    """One line per shape family: along a series at most one shape key changes."""
    series: dict[tuple, list[dict]] = {}
    for p in plotted.PLOTTED:
        series.setdefault((p["figure"], p["series"], p["file"]), []).append(p["shape"])
    mixed = []
    for key, shapes in series.items():
        keys = {k for shape in shapes for k in shape}
        varying = [k for k in keys if len({shape.get(k) for shape in shapes}) > 1]
        if len(varying) > 1:
            mixed.append(f"{key}: {varying} all change")
    assert not mixed, "series that join points of different shapes:\n" + "\n".join(mixed)


def test_no_legend_covers_the_data(plotted):
    assert not plotted.LEGENDS_OVER_DATA, f"legends over an axes' data area: {plotted.LEGENDS_OVER_DATA}"
