#!/usr/bin/env python3
"""Draw the course's plots from measurement files (JSON) into SVG images.

Every plot on the site is drawn by this script from a committed measurement, so every number in a
figure can be traced to a file. Re-run it after adding measurements, or point it at your own:

    python docs/scripts/plot_measurements.py                       # docs/measurements -> docs/assets/plots
    python docs/scripts/plot_measurements.py --measurements my_runs --out my_plots

Two kinds of input are read from the measurements folder (every ``*.json`` in it; other files are
ignored, and so is a JSON file of neither kind, with a note on stderr):

1. **Exercise benchmarks** (written by the course's benchmark scripts, and by you on your own GPU)::

       {"meta": {"gpu", "torch", "triton", "driver", "date", "ceiling_gbps", "spec_gbps", "command"},
        "rows": [{"kernel": "solution" | "torch" | "compile" | "naive" | ..., <shape keys: "M", "N", "n", ...>,
                  "ms", "gbps", "fraction"}]}

   The file is exercise N's when its name ends in ``exNN-<slug>.json``, the name
   ``python -m tools.benchmarks exNN_<slug>`` gives it (``h200-ex03-softmax.json``), or when
   ``meta["exercise"]`` is N. Rows may name a ``part`` (exercise 9's file: peers, sweeps, a training
   step); only its ``peers`` rows of the forward join the cross-exercise figures, and exercise 9 has
   figures of its own (``ex09_rmsnorm_peers.svg``, ``ex09_sweeps.svg``) in place of the generic one. Other files that name an exercise, such as tuning sweeps
   (``h200-tiles-ex02.json``) and exercise 7's variants (``h200-ex07-attention-variants.json``), are
   extras: only the figures made for them read them. Bytes moved are recovered as ``gbps * ms * 1e6``
   (GB/s times milliseconds), so the script needs no knowledge of each exercise's byte model. A row may
   carry ``"tflops"`` instead of ``"gbps"`` (attention).

2. **Baseline files** (the first H200 measurements, 2026-11-30): ``h200-baselines-*.json`` (copy
   ceiling, softmax sweep, bias+GELU) and ``h200-attention-*.json`` (attention against SDPA).

3. **Probes** that name no exercise, in the benchmark format: ``*-zeros-like.json`` (exercise 1's add with
   ``empty_like`` and ``zeros_like``, chapter 2) and ``*-roofline.json`` (the roofline's points and roofs).

Three rules hold for every figure, and tests/test_figures.py checks them on what was drawn:

* **Physics**: no point above the ceiling it is drawn against (``meta.ceiling_gbps``, the better of a copy
  and an add, as the grader's) or above the spec peak. A point above it is a byte model that counts bytes the
  memory never moved, or a wrong measurement: fix the file, never excuse the point.
* **One run**: a figure compares what one run measured. A run is ``meta.run``, the time the benchmark driver
  made its header, the same in every file of one driver call; a file without it is a run of its own. So the
  size figure joins the add probe and exercise 3's sweep only when their ``run`` agree, and the three
  softmax schedules come from exercise 3's file alone, whose sweep times them in turns.
* **Provenance**: each figure names its source files, GPU and versions in a footer, and ``SOURCES.md`` in the
  output folder lists them (the site includes that table on the measurements page). Legends hold at most six
  entries: more go to panels or labels on the data.

Where an exercise benchmark exists it is plotted, and the baseline file is the fallback.

The output is deterministic (no timestamps, fixed SVG ids), so re-running on unchanged data leaves
``git status`` clean. Needs matplotlib (``pip install matplotlib``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent
sys.path.insert(0, str(DOCS.parent))
from grader import catalogue  # noqa: E402  (the exercise list; standard library only)

#: Exercise number -> the slug in its benchmark file's name (7 -> "flash-attention").
SLUGS = {e.number: Path(e.solution_file).stem.split("_", 1)[1].replace("_", "-") for e in catalogue.EXERCISES}
DEFAULT_MEASUREMENTS = DOCS / "measurements"
DEFAULT_OUT = DOCS / "assets" / "plots"

#: The plots always drawn (the site links to these names); per-exercise plots are added when data exists.
CORE_PLOTS = (
    "bandwidth_vs_size.svg",
    "softmax_comparison.svg",
    "softmax_variants.svg",
    "bias_gelu_fusion.svg",
    "attention_vs_sdpa.svg",
    "roofline.svg",
    "cross_entropy_memory.svg",
)

#: One colour per implementation, the same in every figure.
COLOURS = {
    "copy": "#222222",
    "naive": "#9e9e9e",
    "torch": "#1f77b4",
    "compile": "#ff7f0e",
    "triton": "#2ca02c",
    "solution": "#2ca02c",
    "persistent": "#9467bd",
    "online": "#8c564b",
    "sdpa": "#1f77b4",
}
LABELS = {
    "naive": "naive PyTorch (five kernels)",
    "torch": "torch (eager)",
    "compile": "torch.compile",
    "triton": "Triton, one row per program",
    "solution": "Triton (reference solution)",
    "persistent": "Triton, persistent",
    "online": "Triton, online (two passes)",
}


# ---------------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------------


@dataclass
class Source:
    """One measurement file and what it says about where it was measured."""

    path: Path
    data: object
    gpu: str = "unknown GPU"
    torch: str = "?"
    triton: str = "?"
    date: str = ""
    #: The run the file comes from: ``meta.run`` (the time the benchmark driver made its header, the same
    #: in every file of one driver call), else the file itself (a file without it is one run of its own).
    run: str = ""

    def __post_init__(self) -> None:
        self.run = self.run or f"{self.path.name} alone"

    def footer(self) -> str:
        date = f" · {self.date}" if self.date else ""
        return f"source: {self.path.name} · {self.gpu} · torch {self.torch} · Triton {self.triton}{date}"


@dataclass
class Measurements:
    baseline: Source | None = None
    attention: Source | None = None
    #: Exercise number -> its benchmark file (``<gpu>-exNN-<slug>.json``; the last by name if several).
    exercises: dict[int, Source] = field(default_factory=dict)
    #: File name -> other benchmark files: sweeps that name an exercise (tiles, variants) and probes that
    #: name none (``h200-zeros-like.json``, ``h200-roofline.json``).
    extras: dict[str, Source] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)


def _date_from_name(name: str) -> str:
    match = re.search(r"\d{4}-\d{2}-\d{2}", name)
    return match.group(0) if match else ""


def _exercise_number(path: Path, meta: dict) -> int | None:
    if isinstance(meta.get("exercise"), int):
        return meta["exercise"]
    match = re.search(r"(?:^|[-_])ex(\d{1,2})(?:[-_.]|$)", path.name)
    return int(match.group(1)) if match else None


def load(folder: Path) -> Measurements:
    """Read every JSON file in ``folder`` and sort it into baseline, attention or exercise data."""
    found = Measurements()
    # The attention file's provenance is the baseline's (same run); it has no header of its own.
    attention_paths: list[tuple[Path, object]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            found.ignored.append(f"{path.name}: not readable JSON ({exc})")
            continue
        if isinstance(data, dict) and isinstance(data.get("meta"), dict) and isinstance(data.get("rows"), list):
            meta = data["meta"]
            number = _exercise_number(path, meta)
            if not any(isinstance(r, dict) and (r.get("gbps") or r.get("tflops")) for r in data["rows"]):
                found.ignored.append(f"{path.name}: no row has \"gbps\" or \"tflops\" (nothing to plot)")
                continue
            source = Source(
                path, data, gpu=str(meta.get("gpu") or meta.get("device") or "unknown GPU"),
                torch=str(meta.get("torch", "?")),
                triton=str(meta.get("triton", "?")), date=str(meta.get("date", "") or _date_from_name(path.name)),
                run=str(meta.get("run") or ""),
            )
            if number is not None and (meta.get("exercise") == number
                                       or path.name.endswith(f"ex{number:02d}-{SLUGS.get(number)}.json")):
                found.exercises[number] = source
            else:
                found.extras[path.name] = source
        elif isinstance(data, dict) and "copy_peak_GBs" in data:
            found.baseline = Source(path, data, gpu=data.get("gpu", "unknown GPU"), torch=data.get("torch", "?"),
                                    triton=data.get("triton", "?"), date=_date_from_name(path.name),
                                    run=f"the baseline run of {_date_from_name(path.name)}")
        elif isinstance(data, list) and data and isinstance(data[0], dict) and "sdpa_TF" in data[0]:
            attention_paths.append((path, data))
        else:
            found.ignored.append(f"{path.name}: neither an exercise benchmark nor a baseline file")
    for path, data in attention_paths:
        base = found.baseline
        same_run = base is not None and base.date == _date_from_name(path.name)  # README: "same run"
        found.attention = Source(path, data, gpu=base.gpu if base else "unknown GPU",
                                 torch=base.torch if base else "?", triton=base.triton if base else "?",
                                 date=_date_from_name(path.name), run=base.run if same_run else "")
    return found


# ---------------------------------------------------------------------------------------------------
# Figure helpers
# ---------------------------------------------------------------------------------------------------


def _style() -> None:
    plt.rcParams.update({
        "svg.hashsalt": "triton-course",  # stable element ids: re-running leaves git clean
        "svg.fonttype": "none",  # text stays text (small, searchable)
        "font.family": "sans-serif",
        "font.size": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "legend.frameon": False,
        "figure.dpi": 100,
    })


def _footer(sources: list[Source]) -> str:
    """One line per run: the files it wrote, the GPU, the versions and the date."""
    runs: dict[tuple, list[str]] = {}
    for source in sources:
        runs.setdefault((source.run, source.gpu, source.torch, source.triton, source.date), []).append(source.path.name)
    lines = []
    for (_run, gpu, torch_version, triton_version, date), names in runs.items():
        lines.append(f"source: {', '.join(dict.fromkeys(names))} · {gpu} · torch {torch_version} · Triton {triton_version}"
                     + (f" · {date}" if date else ""))
    return "\n".join(lines)


def _overlapping_ticks(fig, renderer) -> list[str]:
    """Tick labels of one axis whose boxes overlap (unreadable), as 'axes title: label / label'."""
    found = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in axis.get_ticklabels()
                     if t.get_visible() and t.get_text()]
            for (text_a, a), (text_b, b) in zip(boxes, boxes[1:]):
                if a.overlaps(b):
                    found.append(f"{ax.get_title() or ax.get_xlabel()}: {text_a!r} / {text_b!r}")
    return found


def _save(fig, out: Path, name: str, sources: list[Source], written: dict[str, list[str]]) -> None:
    fig.tight_layout()  # tick labels inside the figure, so the footer below cannot overlap them
    # Below the axes (negative figure coordinates); bbox_inches="tight" grows the image to hold it.
    fig.text(0.01, -0.01, _footer(sources), fontsize=7, color="#555555", ha="left", va="top")
    fig.savefig(out / name, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    renderer = fig.canvas.get_renderer()
    legends = [a.get_legend() for a in fig.axes if a.get_legend() is not None] + list(fig.legends)
    for legend in legends:
        box = legend.get_window_extent(renderer)
        if any(box.overlaps(a.get_window_extent(renderer)) for a in fig.axes if a.has_data()):
            LEGENDS_OVER_DATA.append(name)
    LEGEND_ENTRIES[name] = max((len(legend.get_texts()) for legend in legends), default=0)
    TICKS_OVERLAPPING[name] = _overlapping_ticks(fig, renderer)
    RUNS[name] = [s.run for s in sources]
    plt.close(fig)
    written[name] = [s.path.name for s in sources]


#: Row keys that are measurements or labels, not part of the shape.
NOT_SHAPE = {"kernel", "ms", "ms_runs", "bytes", "gbps", "fraction", "tflops", "causal", "error", "dtype"}
#: The keys that name a row's shape in the benchmark files (vector length, rows and columns, batch,
#: sequence and vocabulary sizes): a series joins points that differ in one of these only.
SHAPE_KEYS = ("n", "M", "N", "B", "S", "S_k", "T", "V", "H", "D")


def _shape_keys(row: dict) -> list[str]:
    return [k for k in row if k not in NOT_SHAPE]


def _rows_bytes(row: dict) -> float | None:
    """Bytes the row's byte model counts: its "bytes", else GB/s × ms (a row that failed has neither)."""
    try:
        if row.get("bytes"):
            return float(row["bytes"])
        return float(row["gbps"]) * float(row["ms"]) * 1e6
    except (KeyError, TypeError, ValueError):
        return None


def _ceiling(source: Source | None, fallback: float | None) -> float | None:
    if source is not None:
        meta = source.data.get("meta", {}) if isinstance(source.data, dict) else {}
        if meta.get("ceiling_gbps"):
            return float(meta["ceiling_gbps"])
    return fallback


def _fraction(row: dict, ceiling: float | None) -> float | None:
    if row.get("fraction") is not None:
        return float(row["fraction"])
    if row.get("gbps") is not None and ceiling:
        return float(row["gbps"]) / ceiling
    return None


def _graded_rows(rows: list) -> list[dict]:
    """The rows of the function an exercise grades: a file whose rows name a ``part`` (exercise 9's:
    peers, sweeps, a training step) contributes only its ``peers`` rows of the forward (``op`` fwd)."""
    return [r for r in rows if isinstance(r, dict)
            and ("part" not in r or (r["part"] == "peers" and r.get("op", "fwd") == "fwd"))]


def _kernel_key(name: str) -> str:
    name = str(name).lower()
    if name.startswith("variant"):  # tuning rows (other warps, stages, compile settings): not a series
        return name
    for key in ("naive", "compile", "torch", "persist", "online", "solution", "triton"):
        if key in name:
            return "persistent" if key == "persist" else key
    return name


#: Every bandwidth or throughput point drawn, for tests/test_figures.py: {"figure", "series", "file", "x",
#: "value", "ceiling", "spec", "shape"}, value and ceilings in one unit. No point may pass its ceiling: one
#: that does is a byte model counting bytes the memory never moved, or a wrong measurement.
PLOTTED: list[dict] = []
#: Figures whose legend covers part of an axes' data area (tests/test_site.py wants none).
LEGENDS_OVER_DATA: list[str] = []
#: Figure -> entries of its largest legend (tests/test_figures.py: at most a reader can match by colour).
LEGEND_ENTRIES: dict[str, int] = {}
#: Figure -> tick labels that overlap (tests/test_figures.py wants none).
TICKS_OVERLAPPING: dict[str, list[str]] = {}
#: Figure -> the run of each source it was drawn from (tests/test_figures.py: one run per figure).
RUNS: dict[str, list[str]] = {}


def _families(rows: list[dict], keys: tuple[str, ...]) -> list[tuple[str, list[dict]]]:
    """Rows of one kernel split into shape families: rows that differ in one shape key only (an N sweep
    at fixed M, an M sweep at fixed N). A row may belong to two families; a row in none stands alone.
    Points of different families are never joined by one line."""
    present = [k for k in keys if any(k in r for r in rows)]
    if len(present) <= 1:
        return [("", rows)] if rows else []
    families: list[tuple[str, list[dict]]] = []
    placed: set[int] = set()
    for varying in present:
        groups: dict[tuple, list[dict]] = {}
        for r in rows:
            groups.setdefault(tuple((k, r.get(k)) for k in present if k != varying), []).append(r)
        for fixed, members in groups.items():
            if len({r.get(varying) for r in members}) >= 2:
                label = ", ".join(f"{k} = {v}" for k, v in fixed)
                families.append((label, members))
                placed.update(id(r) for r in members)
    families += [(", ".join(f"{k} = {r.get(k)}" for k in present), [r]) for r in rows if id(r) not in placed]
    return families


def _draw_bandwidth(ax, figure: str, series: str, file: str, points: list[tuple[float, float, dict]],
                    ceiling: float | None, scale: float = 1.0, spec: float | None = None, **style) -> None:
    """One series: (x, value, shape) points joined by a line, each recorded in `PLOTTED` with the
    ceiling (and spec peak) it must stay under. `scale` converts the value to what the axis shows (100
    for a percentage)."""
    points = sorted(points, key=lambda p: p[0])
    if points:
        ax.plot([p[0] for p in points], [scale * p[1] for p in points], **style)
    for x, value, shape in points:
        PLOTTED.append({"figure": figure, "series": series, "file": file, "x": x, "value": value,
                        "ceiling": ceiling, "spec": spec, "shape": shape})


def _legend_outside(ax, **kwargs) -> None:
    """The legend to the right of the axes, never over the data (none when nothing is labelled)."""
    if not ax.get_legend_handles_labels()[1]:
        return
    ax.legend(fontsize=kwargs.pop("fontsize", 8), loc="upper left", bbox_to_anchor=(1.02, 1.0), **kwargs)


# ---------------------------------------------------------------------------------------------------
# The plots
# ---------------------------------------------------------------------------------------------------


def _spec(source: Source) -> float | None:
    meta = source.data.get("meta", {}) if isinstance(source.data, dict) else {}
    return float(meta["spec_gbps"]) if meta.get("spec_gbps") else None


def _ceiling_lines(ax, ceiling: float | None, spec: float | None, scale: float = 1.0) -> None:
    """The measured ceiling (the better of a copy and an add, as the grader's) and the spec peak, labelled
    on the axes rather than in the legend."""
    if ceiling:
        ax.axhline(scale * ceiling, color=COLOURS["copy"], ls="--", lw=1)
        ax.annotate(f"measured ceiling {ceiling:.0f} GB/s (the better of a copy and an add)" if scale == 1.0
                    else "measured ceiling (the better of a copy and an add)", (0.01, scale * ceiling),
                    xycoords=("axes fraction", "data"), xytext=(0, 3), textcoords="offset points", fontsize=7)
    if spec:
        ax.axhline(scale * spec, color="#b22222", ls=":", lw=1)
        ax.annotate(f"spec peak {spec:.0f} GB/s (memory clock × bus width × 2)", (0.01, scale * spec),
                    xycoords=("axes fraction", "data"), xytext=(0, 3), textcoords="offset points", fontsize=7,
                    color="#b22222")


#: The three Triton schedules of chapters 4-6, as exercise 3's file names them (all timed in its turns).
SOFTMAX_SCHEDULES = (("solution", "one row per program (exercise 3)", COLOURS["solution"]),
                     ("persistent", "persistent (exercise 4)", COLOURS["persistent"]),
                     ("online", "online, two reads (exercise 5)", COLOURS["online"]))


def plot_bandwidth_vs_size(m: Measurements, out: Path, written: dict) -> None:
    """Achieved GB/s against bytes moved per call, from one run: exercise 1's add at sizes from 48 KiB to
    1.5 GiB (the zeros_like probe's ``empty_like`` rows) and the three softmax schedules over M at
    N = 4096 (exercise 3's file), with the run's measured ceiling and the spec peak."""
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    softmax = m.exercises.get(3)
    add = _extra(m, "zeros-like.json")
    sources = [s for s in (add, softmax) if s is not None]
    if softmax is not None and add is not None and add.run != softmax.run:
        sources = [softmax]  # never two runs on one plot
    ceiling = spec = None
    for source in sources:
        ceiling = ceiling or _ceiling(source, None)
        spec = spec or _spec(source)
        if source is add:
            points = [(float(r["bytes"]), float(r["gbps"]), {"n": r["n"]}) for r in source.data["rows"]
                      if r.get("kernel") == "empty_like" and r.get("gbps")]
            _draw_bandwidth(ax, "bandwidth_vs_size.svg", "vector add", source.path.name, points, ceiling, spec=spec,
                            marker="s", color=COLOURS["copy"], label="vector add (exercise 1's kernel)")
            continue
        for kernel, label, colour in SOFTMAX_SCHEDULES:
            points = [(float(r["bytes"]), float(r["gbps"]), {"M": r["M"], "N": r["N"]}) for r in source.data["rows"]
                      if r.get("kernel") == kernel and r.get("N") == 4096 and r.get("dtype") == "fp32" and r.get("gbps")]
            _draw_bandwidth(ax, "bandwidth_vs_size.svg", kernel, source.path.name, points, ceiling, spec=spec,
                            marker="o", color=colour, label=f"softmax fp32, N = 4096, {label}")
    _ceiling_lines(ax, ceiling, spec)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=4))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_bytes_label))
    ax.set_xlabel("bytes moved per call (read + written)")
    ax.set_ylabel("achieved bandwidth (GB/s)")
    ax.set_ylim(0, (spec or ceiling or 1) * 1.12)
    ax.set_title("Small transfers cannot reach the ceiling: a fixed cost per launch dominates", fontsize=10)
    _legend_outside(ax, fontsize=7)
    _save(fig, out, "bandwidth_vs_size.svg", sources, written)


def _bytes_label(value: float, _pos) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


def _softmax_series(m: Measurements) -> tuple[dict[str, list[tuple[int, int, float]]], list[Source], list[dict]]:
    """kernel -> [(M, N, fraction of the ceiling)], from exercise 3's file (every kernel of one shape timed in
    its turns), else from the baseline file; with the source and the rows of kernels that failed."""
    source = m.exercises.get(3)
    series: dict[str, list[tuple[int, int, float]]] = {}
    if source is not None:
        ceiling = _ceiling(source, None)
        failed = [r for r in source.data["rows"] if r.get("error") and r.get("dtype", "fp32") == "fp32"]
        for row in source.data["rows"]:
            frac = _fraction(row, ceiling)
            if frac is None or "M" not in row or "N" not in row or row.get("dtype", "fp32") != "fp32":
                continue
            series.setdefault(_kernel_key(row.get("kernel", "?")), []).append((row["M"], row["N"], frac))
        if series:
            return series, [source], failed
    if m.baseline is None:
        return {}, [], []
    b = m.baseline.data
    ceiling = b["copy_peak_GBs"]
    for key, kernel in (("naive_torch", "naive"), ("torch", "torch"), ("compile", "compile"),
                        ("triton_row", "solution"), ("triton_persist", "persistent"), ("triton_online", "online")):
        for r in b.get("softmax", []):
            if r.get(key) is not None:
                series.setdefault(kernel, []).append((r["M"], r["N"], r[key] / ceiling))
    failed = [{"kernel": "persistent", "M": r["M"], "N": r["N"], "error": r["triton_persist_exc"]}
              for r in b.get("softmax", []) if r.get("triton_persist_exc")]
    return series, [m.baseline], failed


def _two_sweeps(ax_n, ax_m, series: dict, kernels: tuple[tuple[str, str, str], ...], source: Source) -> None:
    """Left: fraction vs N at the most common M. Right: fraction vs M at the most common N."""
    all_rows = [(mm, nn) for pts in series.values() for mm, nn, _ in pts]
    if not all_rows:
        return
    common_m = max(set(r[0] for r in all_rows), key=lambda v: sum(1 for r in all_rows if r[0] == v))
    common_n = max(set(r[1] for r in all_rows), key=lambda v: sum(1 for r in all_rows if r[1] == v))
    figure = ax_n.figure.get_label() or "softmax"
    spec = _spec(source) if isinstance(source.data, dict) and "meta" in source.data else None
    ceiling = _ceiling(source, None)
    spec_fraction = spec / ceiling if spec and ceiling else None
    for kernel, label, colour in kernels:
        pts = series.get(kernel, [])
        by_n = sorted((nn, f) for mm, nn, f in pts if mm == common_m)
        by_m = sorted((mm, f) for mm, nn, f in pts if nn == common_n)
        style = dict(color=colour, label=label, marker="o", ms=4)
        _draw_bandwidth(ax_n, figure, f"{kernel}, M = {common_m}", source.path.name,
                        [(n, f, {"M": common_m, "N": n}) for n, f in by_n], 1.0, scale=100, spec=spec_fraction, **style)
        _draw_bandwidth(ax_m, figure, f"{kernel}, N = {common_n}", source.path.name,
                        [(mm, f, {"M": mm, "N": common_n}) for mm, f in by_m], 1.0, scale=100, spec=spec_fraction,
                        **style)
    for ax, what, fixed in ((ax_n, "N (row length)", f"M = {common_m} rows"),
                            (ax_m, "M (number of rows)", f"N = {common_n}")):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel(what)
        ax.set_ylim(0, 110)
        ax.axhline(100, color=COLOURS["copy"], ls="--", lw=1)
        ax.set_title(fixed, fontsize=10)
    ax_n.set_ylabel("% of the measured ceiling")


def plot_softmax_comparison(m: Measurements, out: Path, written: dict) -> None:
    series, sources, _failed = _softmax_series(m)
    fig, (ax_n, ax_m) = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
    kernels = tuple((k, LABELS[k], COLOURS[k]) for k in ("naive", "torch", "compile") if k in series)
    kernels += (("solution", "Triton, one row per program (exercise 3)", COLOURS["solution"]),)
    fig.set_label("softmax_comparison.svg")
    if sources:
        _two_sweeps(ax_n, ax_m, series, kernels, sources[0])
    _legend_outside(ax_m)
    fig.suptitle("Softmax, fp32: naive vs torch vs torch.compile vs a fused Triton kernel")
    _save(fig, out, "softmax_comparison.svg", sources, written)


def plot_softmax_variants(m: Measurements, out: Path, written: dict) -> None:
    """One row per program vs persistent vs online, from one file whose sweep timed all three in turns
    (exercise 3's), or the baseline file alone."""
    series, sources, failed = _softmax_series(m)
    fig, (ax_n, ax_m) = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
    fig.set_label("softmax_variants.svg")
    if sources:
        _two_sweeps(ax_n, ax_m, series, SOFTMAX_SCHEDULES, sources[0])
    all_m = [mm for pts in series.values() for mm, _n, _f in pts]
    common_m = max(set(all_m), key=all_m.count) if all_m else None
    for row in failed:
        if row.get("kernel") == "persistent" and row.get("M") == common_m:
            ax_n.plot([row["N"]], [3], "x", color=COLOURS["persistent"], ms=9, mew=2)
            ax_n.annotate("persistent: did not run\n(" + str(row["error"]).split(":")[0] + ")",
                          (row["N"], 3), xytext=(-8, 12), textcoords="offset points", ha="right", fontsize=7,
                          color=COLOURS["persistent"])
    _legend_outside(ax_m)
    fig.suptitle("Softmax, fp32: three Triton schedules for the same math, timed in turns")
    _save(fig, out, "softmax_variants.svg", sources, written)


def plot_bias_gelu(m: Measurements, out: Path, written: dict) -> None:
    bars: list[tuple[str, float, str]] = []
    sources: list[Source] = []
    title = "Bias + GELU"
    source = m.exercises.get(2)
    if source is not None:
        rows = source.data["rows"]
        # The largest shape measured: the one closest to the steady state.
        shape_rows = [r for r in rows if r.get("ms") is not None]
        if shape_rows:
            key_shape = max(shape_rows, key=lambda r: (r.get("M", 0) * r.get("N", 0), _rows_bytes(r) or 0))
            shape = {k: key_shape[k] for k in ("M", "N", "dtype") if k in key_shape}
            for r in shape_rows:
                if all(r.get(k) == v for k, v in shape.items()):
                    kernel = _kernel_key(r.get("kernel", "?"))
                    bars.append((LABELS.get(kernel, str(r.get("kernel"))), float(r["ms"]), kernel))
            sources = [source]
            title += " " + " × ".join(str(v) for v in shape.values())
    if not bars and m.baseline is not None and "bias_gelu" in m.baseline.data:
        g = m.baseline.data["bias_gelu"]
        bars = [("unfused PyTorch\n(x + bias, then GELU)", g["unfused_ms"], "torch"),
                ("fused Triton", g["fused_triton_ms"], "triton"),
                ("torch.compile", g["compile_ms"], "compile")]
        sources = [m.baseline]
        title += " 16384 × 4096 fp32"
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    if bars:
        names = [b[0] for b in bars]
        values = [1000 * b[1] for b in bars]
        ax.barh(names, values, color=[COLOURS.get(b[2], "#777777") for b in bars])
        slowest = max(values)
        for y, v in enumerate(values):
            ax.annotate(f"{v:.0f} µs" + (f"  ({slowest / v:.2f}× faster)" if v < slowest else ""), (v, y),
                        xytext=(4, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_xlim(0, slowest * 1.45)
        ax.invert_yaxis()
    ax.set_xlabel("time per call (µs, lower is better)")
    ax.grid(axis="y", visible=False)
    ax.set_title(title + ": one pass instead of two")
    _save(fig, out, "bias_gelu_fusion.svg", sources, written)


def _attention_rows(m: Measurements) -> tuple[list[dict], list[Source]]:
    """[{"label", "causal", "sdpa", "triton"}] in TFLOP/s, from exercise 7's file or the baseline."""
    source = m.exercises.get(7)
    if source is not None:
        groups: dict[tuple, dict] = {}
        for r in source.data["rows"]:
            # Only the solution against SDPA; sweep and "best config" rows are for tuning.
            if r.get("tflops") is None or r.get("kernel") not in ("solution", "sdpa", "torch"):
                continue
            keys = [k for k in ("B", "H", "S", "D") if k in r] or _shape_keys(r)
            shape = tuple((k, r[k]) for k in keys)
            if r.get("dtype", "fp16") != "fp16":
                shape += (("", r["dtype"]),)
            key = (shape, bool(r.get("causal", False)))
            words = [f"{k}{v}" if len(str(k)) <= 1 else f"{k}={v}" for k, v in shape]
            label = "\n".join(" ".join(words[i:i + 2]) for i in range(0, len(words), 2))
            entry = groups.setdefault(key, {"label": label, "causal": key[1]})
            kernel = _kernel_key(r.get("kernel", ""))
            entry["sdpa" if kernel in ("torch", "sdpa") else "triton"] = float(r["tflops"])
        rows = [g for g in groups.values() if "sdpa" in g and "triton" in g]
        if rows:
            return rows, [source]
    if m.attention is None:
        return [], []
    rows = [{"label": "B{} H{}\nS{} D{}".format(*r["shape"]), "causal": r["causal"],
             "sdpa": r["sdpa_TF"], "triton": r["triton_TF"]} for r in m.attention.data]
    return rows, [m.attention]


def plot_attention(m: Measurements, out: Path, written: dict) -> None:
    """SDPA and the Triton forward per shape, TFLOP/s; one panel without the causal mask, one with it."""
    rows, sources = _attention_rows(m)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    top = max((r["sdpa"] for r in rows), default=1) * 1.2
    for ax, causal in zip(axes, (False, True)):
        group = [r for r in rows if bool(r["causal"]) == causal]
        x = list(range(len(group)))
        w = 0.38
        ax.bar([i - w / 2 for i in x], [r["sdpa"] for r in group], w, color=COLOURS["sdpa"],
               label="torch scaled_dot_product_attention")
        ax.bar([i + w / 2 for i in x], [r["triton"] for r in group], w, color=COLOURS["triton"],
               label="Triton FlashAttention-2 forward")
        for i, r in enumerate(group):
            ax.annotate(f"{100 * r['triton'] / r['sdpa']:.0f}%", (i + w / 2, r["triton"]), xytext=(0, 2),
                        textcoords="offset points", ha="center", fontsize=7)
        ax.set_xticks(x)
        ax.set_xticklabels([r["label"] for r in group], fontsize=7)
        ax.grid(axis="x", visible=False)
        ax.set_ylim(0, top)
        ax.set_title("causal" if causal else "not causal", fontsize=9)
    axes[0].set_ylabel("TFLOP/s (higher is better)")
    _legend_outside(axes[1])
    # Exercise 7's file labels bf16 bars and measures fp16 otherwise; the baseline file is all bf16.
    from_baseline = bool(sources) and sources[0] is m.attention
    fig.suptitle("Attention forward" + (", bf16" if from_baseline else ", fp16 unless marked")
                 + ": Triton as a percentage of SDPA", fontsize=10)
    _save(fig, out, "attention_vs_sdpa.svg", sources, written)


#: The roofline file's rows: (kernel, label) in the order they are drawn.
ROOFLINE_POINTS = (("vector_add", "vector add fp32\n1 FLOP / 12 B"),
                   ("softmax", "softmax fp32\n≈5 FLOP / 8 B"),
                   ("attention_solution", "attention prefill,\nexercise 7's solution"))


def _roofline_points(m: Measurements) -> tuple[float, float | None, list[tuple[str, float, float, dict]], list[Source]]:
    """(memory roof in GB/s, compute roof in TFLOP/s, [(label, FLOP per byte, FLOP/s, row)], sources), all from
    one run: ``h200-roofline.json``, else the baseline file with the attention file of the same run."""
    source = _extra(m, "roofline.json")
    if source is not None:
        rows = {r["kernel"]: r for r in source.data["rows"] if r.get("ms")}
        compute = rows["attention_sdpa"]["tflops"] if "attention_sdpa" in rows else None
        points = []
        for kernel, label in ROOFLINE_POINTS:
            if kernel in rows:
                row = rows[kernel]
                intensity = float(row["flops"]) / float(row["bytes"])
                if kernel == "attention_solution":
                    label = f"{label}\nS = {row['S']}: S/2 = {intensity:.0f} FLOP/B"
                points.append((label, intensity, float(row["flops"]) / (float(row["ms"]) * 1e-3), row))
        return _ceiling(source, None), compute, points, [source]
    if m.baseline is None:
        return 0.0, None, [], []
    b = m.baseline.data
    # The better of a copy and an add, as the grader's ceiling: the baseline timed both.
    roof = max(b["copy_peak_GBs"], b.get("vadd_triton_GBs") or 0.0, b.get("vadd_torch_GBs") or 0.0)
    points = [("vector add fp32\n1 FLOP / 12 B", 1 / 12, b["vadd_triton_GBs"] * 1e9 / 12, {})] if b.get("vadd_triton_GBs") else []
    soft = [r for r in b.get("softmax", []) if r["M"] == 4096 and r["N"] == 4096 and r.get("triton_row")]
    if soft:
        points.append(("softmax fp32\n≈5 FLOP / 8 B", 5 / 8, soft[0]["triton_row"] * 1e9 * 5 / 8, {}))
    sources, compute = [m.baseline], None
    if m.attention is not None and m.attention.run == m.baseline.run:
        sources.append(m.attention)
        compute = max(r["sdpa_TF"] for r in m.attention.data)
        first = next((r for r in m.attention.data if not r.get("causal")), None)
        if first is not None:
            s = first["shape"][2]  # bf16, per head: 4·S²·D FLOP over Q, K, V, O = 4·S·D·2 bytes
            points.append((f"attention prefill, bf16\nS = {s}: S/2 = {s // 2} FLOP/B", s / 2, first["triton_TF"] * 1e12, {}))
    return roof, compute, points, sources


def plot_roofline(m: Measurements, out: Path, written: dict) -> None:
    """Attainable FLOP/s = min(compute roof, intensity × bandwidth), with kernels measured in the same run
    as both roofs: the memory roof is the run's ceiling, the better of a copy and an add (the grader's);
    the compute roof the best attention the run measured (SDPA)."""
    ceiling, compute, points, sources = _roofline_points(m)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    if not sources:
        ax.set_title("Roofline: not measured yet (python -m tools.benchmarks roofline)")
        _save(fig, out, "roofline.svg", [], written)
        return
    bw = ceiling * 1e9
    intensities = [2 ** (k / 4) for k in range(-16, 56)]
    roof = [min(i * bw, compute * 1e12) if compute else i * bw for i in intensities]
    ax.plot(intensities, [r / 1e12 for r in roof], color=COLOURS["copy"], lw=1.5)
    ax.annotate(f"memory roof: {ceiling:.0f} GB/s × intensity\n(the better of a copy and an add)", (4, 4 * bw / 1e12),
                xytext=(-10, 10), textcoords="offset points", ha="right", fontsize=8)
    if compute:
        ax.annotate(f"compute roof used here: SDPA's attention, {compute:.0f} TFLOP/s\n"
                    "(a measured rate, not the datasheet peak)", (intensities[-1], compute), xytext=(0, 6),
                    textcoords="offset points", ha="right", va="bottom", fontsize=8)
        ridge = compute * 1e12 / bw
        ax.axvline(ridge, color="#888888", ls=":", lw=1)
        ax.annotate(f"ridge ≈ {ridge:.0f} FLOP/byte", (ridge, compute / 30), xytext=(4, 0),
                    textcoords="offset points", fontsize=8, color="#555555")
    for label, intensity, achieved, _row in points:
        attainable = min(intensity * bw, compute * 1e12) if compute else intensity * bw
        PLOTTED.append({"figure": "roofline.svg", "series": label.split("\n")[0], "file": sources[0].path.name,
                        "x": intensity, "value": achieved, "ceiling": attainable, "spec": None, "shape": {}})
        ax.plot([intensity], [achieved / 1e12], "o", color=COLOURS["triton"], ms=7)
        right = intensity < 1000  # labels of points near the right edge go to their left
        ax.annotate(label, (intensity, achieved / 1e12), xytext=(6 if right else -6, -10), textcoords="offset points",
                    fontsize=7, ha="left" if right else "right", va="top")
    # Decode: one query against the K/V cache, 4·S·D FLOP over 2·S·D·2 bytes: about 1 FLOP/byte with one
    # query head per KV head, G with grouped heads (4 at Llama-3-8B's, chapter 9), so at most the memory
    # roof either way. A model point, drawn hollow on the roof, not a measurement.
    ax.plot([1.0], [bw / 1e12], "o", color="#d62728", mfc="white", ms=7)
    ax.annotate("attention decode (≈1 FLOP/B,\n4 with grouped heads): at most\nthe roof, not measured here", (1.0, bw / 1e12), xytext=(-8, 6),
                textcoords="offset points", fontsize=7, ha="right", va="bottom")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if compute:
        ax.set_ylim(0.1, compute * 6)
    ax.set_xlim(2 ** -7, 2 ** 14)
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=16))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.set_xlabel("arithmetic intensity (FLOP per byte of HBM traffic)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.set_title(f"Roofline of the measured {sources[0].gpu.replace('NVIDIA ', '')}: where each kernel sits", fontsize=10)
    _save(fig, out, "roofline.svg", sources, written)


#: Exercise 10's implementations, in the order of the legend.
CROSS_ENTROPY = (
    ("eager_fp32", "eager, logits.float() then F.cross_entropy", "#1f77b4", "s"),
    ("eager", "eager, F.cross_entropy on bf16", "#9e9e9e", "v"),
    ("compile", "torch.compile (logits.float())", "#ff7f0e", "D"),
    ("liger", "Liger-Kernel (gradient into the logits)", "#9467bd", "^"),
    ("solution", "exercise 10's solution (gradient into the logits)", "#2ca02c", "o"),
)


def plot_cross_entropy_memory(m: Measurements, out: Path, written: dict) -> None:
    """Exercise 10: memory allocated beyond the logits, and time, against T (V = 128256, bf16)."""
    source = m.exercises.get(10)
    rows = [r for r in source.data["rows"] if r.get("part") == "by_T" and not r.get("error")] if source else []
    fig, (ax_mem, ax_ms) = plt.subplots(1, 2, figsize=(10, 4))
    if not rows:
        for ax in (ax_mem, ax_ms):
            ax.text(0.5, 0.5, "not measured yet:\npython -m tools.benchmarks.ex10_cross_entropy", ha="center",
                    va="center", transform=ax.transAxes, fontsize=9, color="#555555")
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle("Cross-entropy over V = 128256, bf16: memory and time against T")
        _save(fig, out, "cross_entropy_memory.svg", [], written)
        return
    vocabulary = rows[0].get("V")
    for kernel, label, colour, marker in CROSS_ENTROPY:
        series = sorted((r["T"], r) for r in rows if r.get("kernel") == kernel)
        mem = [(t, r["peak_extra_bytes"] / 2**30) for t, r in series if r.get("peak_extra_bytes") is not None]
        ms = [(t, r["ms"]) for t, r in series if r.get("ms") is not None]
        if mem:
            ax_mem.plot(*zip(*mem), marker=marker, color=colour, label=label)
        if ms:
            ax_ms.plot(*zip(*ms), marker=marker, color=colour, label=label)
    logits = sorted({(r["T"], r["T"] * r["V"] * 2 / 2**30) for r in rows if r.get("V")})
    if logits:
        ax_mem.plot(*zip(*logits), color="#222222", ls=":", lw=1, label="the logits themselves (bf16)")
    for ax, ylabel in ((ax_mem, "GiB allocated beyond the logits (peak, one call)"), (ax_ms, "ms per call")):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel(f"T (rows of V = {vocabulary} logits)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
    ax_mem.set_title("memory: loss and gradient, one call", fontsize=10)
    ax_ms.set_title("time: forward and backward, timed in turns", fontsize=10)
    handles, labels = ax_mem.get_legend_handles_labels()
    fig.tight_layout()
    fig.legend(handles, labels, fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(f"Cross-entropy over V = {vocabulary}, bf16, on {source.gpu}")
    _save(fig, out, "cross_entropy_memory.svg", [source], written)


def _is_peer(kernel: str) -> bool:
    """A contender the exercise page compares (the solution, PyTorch, torch.compile, other libraries), not a
    tuning variant of one (``variant_*``, ``per_lane_*``, ``solution BLOCK=512``) or a repeat (``*_again``):
    those belong to the sweep figures and lab notes."""
    return not (kernel.startswith(("variant", "per_lane")) or "=" in kernel or kernel.endswith("_again"))


def _panels(rows: list[dict]) -> list[tuple[str, dict]]:
    """(title, fixed shape keys) of each shape family of the solution's rows with two sizes or more, per dtype."""
    panels = []
    for dtype in dict.fromkeys(str(r.get("dtype", "")) for r in rows):
        solution = [r for r in rows if str(r.get("dtype", "")) == dtype and _kernel_key(r.get("kernel", "")) == "solution"]
        for family, members in _families(solution or [r for r in rows if str(r.get("dtype", "")) == dtype], SHAPE_KEYS):
            keys = [k for k in SHAPE_KEYS if any(k in r for r in members)]
            fixed = {k: members[0].get(k) for k in keys if len({r.get(k) for r in members}) == 1}
            if len(members) >= 2:
                panels.append((", ".join(filter(None, [family, dtype])), {**fixed, "dtype": dtype}))
    return panels


def plot_exercise(number: int, source: Source, out: Path, written: dict) -> None:
    """Generic: GB/s against bytes moved, one panel per shape family (and dtype), one line per contender,
    with the file's ceiling and spec peak."""
    rows = [r for r in source.data["rows"] if isinstance(r, dict) and _rows_bytes(r) and r.get("gbps")
            and _is_peer(str(r.get("kernel", "?")))]
    panels = _panels(rows) or [("", {})]
    name = f"ex{number:02d}_bandwidth.svg"
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 1.5, 3.8), sharey=True, squeeze=False)
    ceiling, spec = _ceiling(source, None), _spec(source)
    kernels = list(dict.fromkeys(str(r.get("kernel")) for r in rows))
    kernels.sort(key=lambda k: _kernel_key(k) != "solution")
    markers = "osD^v<>"
    for ax, (title, fixed) in zip(axes[0], panels):
        for i, kernel in enumerate(kernels):
            key = _kernel_key(kernel)
            solution = key == "solution"
            members = [r for r in rows if str(r.get("kernel")) == kernel
                       and all(str(r.get(k, "")) == str(v) for k, v in fixed.items())]
            points = [(_rows_bytes(r), float(r["gbps"]), {k: r.get(k) for k in SHAPE_KEYS if k in r}) for r in members]
            label = f"exercise {number}'s solution" if solution else LABELS.get(key, kernel)
            _draw_bandwidth(ax, name, f"{kernel} {title}", source.path.name, points, ceiling, spec=spec,
                            marker=markers[i % len(markers)], ms=6 if solution else 4, lw=2.5 if solution else 1.2,
                            ls="-" if solution else "--", alpha=0.7 if solution else 1.0,
                            color=COLOURS.get(key, f"C{i}"), label=label)
        _ceiling_lines(ax, ceiling, spec if ax is axes[0][0] else None)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=4))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_bytes_label))
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
        ax.set_xlabel("bytes moved per call")
        ax.set_ylim(0, (spec or ceiling or 1) * 1.12)
        ax.set_title(title, fontsize=9)
    axes[0][0].set_ylabel("achieved GB/s\n(the exercise's minimum bytes / time)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.suptitle(f"Exercise {number}: achieved bandwidth on {source.gpu}", fontsize=10)
    fig.tight_layout()
    fig.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 0.9))
    _save(fig, out, name, [source], written)


#: Exercise 9's contenders, in the legend's order.
RMSNORM_KERNELS = (("solution", "exercise 9's solution"), ("eager", "torch.nn.functional.rms_norm (eager)"),
                   ("compile", "torch.compile"), ("liger", "Liger-Kernel"))
RMSNORM_OPS = (("fwd", "forward"), ("bwd", "backward"), ("fwdbwd", "forward + backward"))


def plot_rmsnorm_peers(source: Source, out: Path, written: dict) -> None:
    """Exercise 9: % of the measured ceiling against N for each contender, one panel per op (bf16, the
    ``peers`` rows; every contender credited with the same minimum bytes)."""
    rows = [r for r in source.data["rows"] if r.get("part") == "peers" and r.get("fraction") is not None]
    if not rows:
        return
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.8), sharey=True)
    colours = {"solution": COLOURS["solution"], "eager": COLOURS["torch"], "compile": COLOURS["compile"],
               "liger": "#9467bd"}
    for ax, (op, title) in zip(axes, RMSNORM_OPS):
        for kernel, label in RMSNORM_KERNELS:
            pts = sorted((int(r["N"]), 100 * float(r["fraction"])) for r in rows if r["op"] == op and r["kernel"] == kernel)
            if pts:
                solution = kernel == "solution"
                ax.plot(*zip(*pts), marker="o", ms=5 if solution else 4, lw=2.5 if solution else 1.2,
                        color=colours[kernel], label=label)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel("N (columns; M = 16384 rows, bf16)")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("% of the measured ceiling\n(on the minimum bytes)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, 1.07))
    _save(fig, out, "ex09_rmsnorm_peers.svg", [source], written)


def plot_rmsnorm_sweeps(source: Source, out: Path, written: dict) -> None:
    """Exercise 9's configuration sweeps: the forward's warps at each N; the backward's programs per SM
    and warps at each swept N (the configuration the solution picks drawn as a filled marker)."""
    rows = source.data["rows"]
    fwd = [r for r in rows if r.get("part") == "fwd-sweep" and r.get("fraction") is not None]
    bwd = [r for r in rows if r.get("part") == "bwd-sweep" and r.get("fraction") is not None]
    if not fwd and not bwd:
        return
    bwd_ns = sorted({int(r["N"]) for r in bwd})
    fig, axes = plt.subplots(1, 1 + len(bwd_ns), figsize=(3.3 * (1 + len(bwd_ns)), 3.6), sharey=True,
                             squeeze=False)
    axes = axes[0]
    ax = axes[0]
    for n in sorted({int(r["N"]) for r in fwd}):
        pts = sorted((int(r["num_warps"]), 100 * float(r["fraction"])) for r in fwd if int(r["N"]) == n)
        line = ax.plot(*zip(*pts), marker="o", ms=3, label=f"N = {n}")[0]
        for r in fwd:
            if int(r["N"]) == n and r.get("default"):
                ax.plot(int(r["num_warps"]), 100 * float(r["fraction"]), "o", ms=8, color=line.get_color(),
                        markerfacecolor="none")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.set_xlabel("warps per program")
    ax.set_ylabel("% of the measured ceiling")
    ax.set_title("forward", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3)  # below the data
    ax.set_ylim(0, 100)
    for ax, n in zip(axes[1:], bwd_ns):
        for warps in sorted({int(r["num_warps"]) for r in bwd}):
            pts = sorted((int(r["programs_per_sm"]), 100 * float(r["fraction"])) for r in bwd
                         if int(r["N"]) == n and int(r["num_warps"]) == warps)
            if not pts:
                continue
            line = ax.plot(*zip(*pts), marker="s", ms=3, label=f"{warps} warps")[0]
            for r in bwd:
                if int(r["N"]) == n and int(r["num_warps"]) == warps and r.get("default"):
                    ax.plot(int(r["programs_per_sm"]), 100 * float(r["fraction"]), "s", ms=8,
                            color=line.get_color(), markerfacecolor="none")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel("programs per SM (partial sums)")
        ax.set_title(f"backward, N = {n}", fontsize=9)
    if bwd_ns:
        handles, labels = axes[1].get_legend_handles_labels()
        axes[1 + len(bwd_ns) // 2].legend(handles, labels, fontsize=7, loc="upper center",
                                          bbox_to_anchor=(0.5, -0.22), ncol=len(labels))
    fig.suptitle("RMSNorm bf16, M = 16384: circled and boxed, the configuration the solution picks", fontsize=9, y=1.04)
    _save(fig, out, "ex09_sweeps.svg", [source], written)


def _extra(m: Measurements, suffix: str) -> Source | None:
    found = [source for name, source in sorted(m.extras.items()) if name.endswith(suffix)]
    return found[-1] if found else None


def plot_attention_variants(m: Measurements, out: Path, written: dict) -> None:
    """Exercise 7 at D 128: each variant's throughput as a fraction of SDPA, timed in turns with it."""
    source = _extra(m, "ex07-attention-variants.json")
    if source is None:
        return
    variants: dict[str, dict] = {}
    for r in source.data["rows"]:
        name = str(r.get("kernel", ""))
        if name == "sdpa" or name.startswith(("drift", "power")):
            continue
        entry = variants.setdefault(name, {})
        if r.get("wrong"):
            entry["wrong"] = (r.get("max_abs_error"), r.get("sdpa_max_abs_error"))
        elif r.get("ratio_to_sdpa") is not None:
            entry[bool(r.get("causal"))] = float(r["ratio_to_sdpa"])
    names = list(variants)
    fig, ax = plt.subplots(figsize=(8.5, 0.42 * len(names) + 1.4))
    h = 0.38
    for i, name in enumerate(names):
        entry = variants[name]
        for offset, causal, colour, label in ((-h / 2, False, COLOURS["solution"], "not causal"),
                                              (h / 2, True, COLOURS["persistent"], "causal")):
            if causal in entry:
                ax.barh(i + offset, 100 * entry[causal], h, color=colour, label=label if i == 0 else None)
                ax.annotate(f"{100 * entry[causal]:.0f}%", (100 * entry[causal], i + offset), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7)
        if "wrong" in entry:
            error, sdpa_error = entry["wrong"]
            ax.annotate(f"wrong result: max error {error:.2g} (SDPA's {sdpa_error:.1g}), not timed", (1, i),
                        va="center", fontsize=7, color="#b22222")
    ax.axvline(85, color="#b22222", ls=":", lw=1, label="the course's target, 85%")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.set_ylim(len(names) - 0.4, -0.6)  # first variant on top, room below the last
    ax.set_xlim(0, 135)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("throughput as a percentage of SDPA (cuDNN), timed in turns with it")
    ax.grid(axis="y", visible=False)
    _legend_outside(ax)
    ax.set_title("Attention forward at B 4, H 32, S 4096, D 128, fp16: what we tried", fontsize=10)
    _save(fig, out, "ex07_d128_variants.svg", [source], written)


def plot_power_drift(m: Measurements, out: Path, written: dict) -> None:
    """SDPA and the solution in turns from an idle card, with the SM clock NVML reported."""
    source = _extra(m, "ex07-attention-variants.json")
    rows = [r for r in source.data["rows"] if str(r.get("kernel", "")).startswith("drift")] if source else []
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for kernel, colour, label in (("drift: sdpa", COLOURS["sdpa"], "SDPA (cuDNN)"),
                                  ("drift: solution", COLOURS["solution"], "exercise 7's solution")):
        series = [(r["round"], r["tflops"]) for r in rows if r["kernel"] == kernel]
        ax.plot(*zip(*series), marker="o", ms=3, color=colour, label=label)
    ax.set_xlabel("round (one median of each, in turns, from a card idle for 5 s)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, max(r["tflops"] for r in rows) * 1.15)
    clock = ax.twinx()
    clock.plot([r["round"] for r in rows if r["kernel"] == "drift: sdpa"],
               [r["sm_clock_mhz"] for r in rows if r["kernel"] == "drift: sdpa"],
               color="#9e9e9e", ls="--", lw=1, label="SM clock (NVML)")
    clock.set_ylabel("SM clock, MHz", color="#555555")
    clock.set_ylim(0, 2200)
    clock.grid(False)
    clock.spines["right"].set_visible(True)
    lines = ax.get_legend_handles_labels()
    more = clock.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="upper left", bbox_to_anchor=(1.12, 1.0))
    ax.set_title("B 4, H 32, S 4096, D 128, fp16: SDPA slows as the card reaches its power cap", fontsize=10)
    _save(fig, out, "ex07_power_drift.svg", [source], written)


# ---------------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------
# Exercise 8: decode over a paged KV cache (drawn once docs/measurements holds its files)
# ---------------------------------------------------------------------------------------------------

#: Exercises whose benchmark file mixes shape families: drawn by their own figures, not plot_exercise.
DEDICATED = {8}

DECODE_KERNELS = (  # (row kernel, label, colour) in the order of the bars
    ("solution-page16", "exercise 8's solution, pages of 16", COLOURS["solution"]),
    ("solution-page64", "exercise 8's solution, pages of 64", "#98df8a"),
    ("solution-page16-graph", "the solution, pages of 16, from a CUDA graph", "#1a6b1a"),
    ("flashinfer-page16", "FlashInfer, pages of 16", "#9467bd"),
    ("flashinfer-page64", "FlashInfer, pages of 64", "#c5b0d5"),
    ("sdpa-gathered", "SDPA, gather + attention", COLOURS["sdpa"]),
    ("sdpa-contiguous", "SDPA alone, contiguous cache", "#aec7e8"),
    ("sdpa-contiguous-graph", "SDPA alone, contiguous, from a CUDA graph", "#5a8fc0"),
    ("per-query-head", "one program per (sequence, query head)", COLOURS["naive"]),
)


def plot_decode_targets(m: Measurements, out: Path, written: dict) -> None:
    """Exercise 8 at the three target shapes, one panel each: every kernel's fraction of the ceiling, timed
    in turns, named on its own bar (no legend to match colours against)."""
    source = m.exercises.get(8)
    if source is None:
        return
    rows = [r for r in source.data["rows"] if r.get("fraction") is not None and not r.get("sweep")
            and "page_size" not in r and r.get("S_k")]
    shapes = sorted({(r["B"], r["S_k"]) for r in rows})
    if not shapes:
        return
    fig, axes = plt.subplots(1, len(shapes), figsize=(3.2 * len(shapes) + 2.6, 4.0), sharey=True, squeeze=False)
    names = [label for _kernel, label, _colour in DECODE_KERNELS]
    for ax, shape in zip(axes[0], shapes):
        for i, (kernel, _label, colour) in enumerate(DECODE_KERNELS):
            found = [r for r in rows if r["kernel"] == kernel and (r["B"], r["S_k"]) == shape]
            if found:
                value = float(found[0]["fraction"])
                PLOTTED.append({"figure": "decode_targets.svg", "series": f"{kernel}, B {shape[0]}, S_k {shape[1]}",
                                "file": source.path.name, "x": i,
                                "value": value, "ceiling": 1.0, "spec": None, "shape": {"B": shape[0], "S_k": shape[1]}})
                ax.barh(i, 100 * value, color=colour)
                ax.annotate(f"{100 * value:.0f}%", (100 * value, i), xytext=(2, 0), textcoords="offset points",
                            va="center", fontsize=7)
        ax.axvline(100, color=COLOURS["copy"], ls="--", lw=1)
        ax.set_xlim(0, 125)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_title(f"B {shape[0]}, S_k {shape[1]}", fontsize=9)
        ax.set_xlabel("% of the measured ceiling")
        ax.grid(axis="y", visible=False)
    axes[0][0].set_yticks(range(len(names)))
    axes[0][0].set_yticklabels(names, fontsize=8)
    axes[0][0].set_ylim(len(names) - 0.5, -0.5)
    fig.suptitle("Decode attention, H_q 32, H_kv 8, D 128, bf16: a paged cache against its peers\n"
                 "(minimum bytes / time; the dashed line is the measured ceiling)", fontsize=10)
    _save(fig, out, "decode_targets.svg", [source], written)


def plot_decode_sweep(m: Measurements, out: Path, written: dict) -> None:
    """Over S_k, one line per batch size: the solution on the left, FlashInfer on the right."""
    source = m.exercises.get(8)
    if source is None:
        return
    rows = [r for r in source.data["rows"] if r.get("sweep") and r.get("fraction") is not None]
    if not rows:
        return
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.0), sharey=True)
    colours = plt.get_cmap("viridis")
    batches = sorted({r["B"] for r in rows})
    for ax, (kernel, title) in zip(axes, (("solution", "exercise 8's solution"), ("flashinfer", "FlashInfer"))):
        for i, B in enumerate(batches):
            pts = [(r["S_k"], r["fraction"], {"B": B, "S_k": r["S_k"]})
                   for r in rows if r["B"] == B and r["kernel"] == kernel]
            _draw_bandwidth(ax, "decode_sweep.svg", f"B {B}, {kernel}", source.path.name, pts, 1.0, scale=100,
                            marker="o", ms=4, color=colours(i / max(1, len(batches) - 1)), label=f"B = {B}")
        ax.axhline(100, color=COLOURS["copy"], ls="--", lw=1)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel("S_k, cached tokens per sequence (pages of 16)")
        ax.set_ylim(0, 110)
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("% of the measured ceiling")
    _legend_outside(axes[1], fontsize=7)
    fig.suptitle("Decode attention, H_q 32, H_kv 8, D 128, bf16: one line per batch size", fontsize=10)
    _save(fig, out, "decode_sweep.svg", [source], written)


#: One decode step's operators, as the legend groups them (the four small elementwise ones share an entry).
DECODE_STEP_GROUPS = (("attention", ("attention",)), ("QKV projection", ("qkv_projection",)),
                      ("output projection", ("output_projection",)), ("gate + up projection", ("gate_up_projection",)),
                      ("down projection", ("down_projection",)),
                      ("elementwise: RMSNorm, SiLU·mul, residual adds", ("rmsnorm", "silu_mul", "residual_add")))


def plot_decode_step(m: Measurements, out: Path, written: dict) -> None:
    """Amdahl for one decode step of one layer: each operator's share of the time, per (B, S_k)."""
    source = _extra(m, "ex08-decode-step.json")
    if source is None:
        return
    rows = [r for r in source.data["rows"] if r.get("kernel") == "step" and r.get("share") is not None]
    shapes = sorted({(r["B"], r["S_k"]) for r in rows})
    if not shapes:
        return
    fig, ax = plt.subplots(figsize=(8.5, 0.55 * len(shapes) + 1.6))
    colours = plt.get_cmap("tab10")
    for j, shape in enumerate(shapes):
        left = 0.0
        for i, (group, ops) in enumerate(DECODE_STEP_GROUPS):
            share = 100 * sum(r["share"] for r in rows if (r["B"], r["S_k"]) == shape and r["op"] in ops)
            colour = "#d62728" if group == "attention" else colours(i % 10)
            ax.barh(j, share, left=left, color=colour, label=group if j == 0 else None)
            if group == "attention":
                ax.annotate(f"{share:.0f}%", (left + share / 2, j), ha="center", va="center", fontsize=7,
                            color="white")
            left += share
    ax.set_yticks(range(len(shapes)))
    ax.set_yticklabels([f"B {b}, S_k {s}" for b, s in shapes])
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of one layer's decode step (each operator timed alone)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("One decode step of a Llama-3-8B-shaped layer: attention against the weight reads", fontsize=10)
    _save(fig, out, "decode_step.svg", [source], written)


#: The zeros_like probe's variants: (kernel, label, colour).
ZEROS_LIKE = (("empty_like", "out = torch.empty_like(x): one launch", COLOURS["solution"]),
              ("zeros_like", "out = torch.zeros_like(x): a fill, then the add", "#d62728"))


def plot_zeros_like(m: Measurements, out: Path, written: dict) -> None:
    """Chapter 2: exercise 1's add with its output from empty_like or zeros_like. Left, the time per call
    (do_bench's wall time, and the GPU's time as a node of a CUDA graph); right, zeros_like's time over
    empty_like's, against the ratio of the bytes each moves (4/3)."""
    source = _extra(m, "zeros-like.json")
    if source is None:
        return
    rows = [r for r in source.data["rows"] if r.get("ms")]
    if not all(any(r["kernel"] == kernel for r in rows) for kernel, _label, _colour in ZEROS_LIKE):
        return
    # The bound for the bytes a call moved is the spec peak, not the copy-or-add ceiling: the fill is a
    # stream of writes alone, which the H200 moved faster than a copy or an add (the zeros_like rows at
    # 2^27: 16n bytes in less time than the ceiling allows, h200-zeros-like.json, 2026-12-03).
    spec = _spec(source)
    ceiling = spec or _ceiling(source, None)
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(10, 4))
    for kernel, label, colour in ZEROS_LIKE:
        series = sorted((r["n"], r) for r in rows if r["kernel"] == kernel)
        ns = [n for n, _r in series]
        ax_t.plot(ns, [1000 * r["ms"] for _n, r in series], marker="o", ms=4, color=colour, label=f"{label}, wall")
        graphed = [(n, r) for n, r in series if r.get("graph_ms")]
        ax_t.plot([n for n, _r in graphed], [1000 * r["graph_ms"] for _n, r in graphed], marker="s", ms=3, ls="--",
                  color=colour, label=f"{label}, in a CUDA graph")
        for clock in ("ms", "graph_ms"):  # the bytes each call moved over its time: never above the ceiling
            for n, r in series:
                if r.get(clock) and r.get("bytes_moved"):
                    PLOTTED.append({"figure": "zeros_like.svg", "series": f"{kernel}, {clock}", "file": source.path.name,
                                    "x": n, "value": r["bytes_moved"] / (r[clock] * 1e6), "ceiling": ceiling,
                                    "spec": spec, "shape": {"n": n}})
    empty = {r["n"]: r for r in rows if r["kernel"] == "empty_like"}
    zeros = sorted((r["n"], r) for r in rows if r["kernel"] == "zeros_like" and r["n"] in empty)
    ns = [n for n, _r in zeros]
    ax_r.plot(ns, [r["ms"] / empty[n]["ms"] for n, r in zeros], marker="o", ms=4, color="#d62728")
    graphed = [(n, r) for n, r in zeros if r.get("graph_ms") and empty[n].get("graph_ms")]
    ax_r.plot([n for n, _r in graphed], [r["graph_ms"] / empty[n]["graph_ms"] for n, r in graphed], marker="s", ms=3,
              ls="--", color="#d62728")
    ax_r.axhline(4 / 3, color=COLOURS["copy"], ls=":", lw=1)
    ax_r.annotate("bytes moved: 16 n against 12 n (4/3)", (0.99, 4 / 3), xycoords=("axes fraction", "data"),
                  xytext=(0, -10), textcoords="offset points", ha="right", fontsize=7)
    ax_r.set_ylim(0.8, max([2.2] + [r["ms"] / empty[n]["ms"] + 0.2 for n, r in zeros]))
    ax_r.set_ylabel("zeros_like's time / empty_like's")
    ax_t.set_yscale("log")
    ax_t.set_ylabel("µs per call")
    for ax in (ax_t, ax_r):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=16))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"2^{math.log2(v):.0f}"))
        ax.set_xlabel("n, fp32 elements per vector")
    ax_t.set_title("time per call", fontsize=9)
    ax_r.set_title("what the fill adds (solid: wall time; dashed: in a CUDA graph)", fontsize=9)
    fig.tight_layout()
    fig.legend(*ax_t.get_legend_handles_labels(), fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 0.9))
    fig.suptitle("Exercise 1's add, output from empty_like or zeros_like: a second launch, then a third more bytes",
                 fontsize=10)
    _save(fig, out, "zeros_like.svg", [source], written)


def write_sources(out: Path, written: dict[str, list[str]]) -> None:
    lines = ["| plot | drawn from |", "|---|---|"]
    for name, files in written.items():
        shown = ", ".join(f"`{f}`" for f in files) or "(no data found)"
        lines.append(f"| `{name}` | {shown} |")
    (out / "SOURCES.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measurements", type=Path, default=DEFAULT_MEASUREMENTS,
                        help="folder of *.json measurement files (default: docs/measurements)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="folder for the SVG files and SOURCES.md (default: docs/assets/plots)")
    args = parser.parse_args(argv)
    if not args.measurements.is_dir():
        parser.error(f"{args.measurements} is not a folder")
    measurements = load(args.measurements)
    for note in measurements.ignored:
        print(f"ignored {note}", file=sys.stderr)
    if measurements.baseline is None and not measurements.exercises:
        print(f"no measurements found in {args.measurements}: nothing to plot", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    _style()
    written: dict[str, list[str]] = {}
    plot_bandwidth_vs_size(measurements, args.out, written)
    plot_softmax_comparison(measurements, args.out, written)
    plot_softmax_variants(measurements, args.out, written)
    plot_bias_gelu(measurements, args.out, written)
    plot_attention(measurements, args.out, written)
    plot_roofline(measurements, args.out, written)
    plot_attention_variants(measurements, args.out, written)
    plot_power_drift(measurements, args.out, written)
    plot_decode_targets(measurements, args.out, written)
    plot_decode_sweep(measurements, args.out, written)
    plot_decode_step(measurements, args.out, written)
    plot_cross_entropy_memory(measurements, args.out, written)
    plot_zeros_like(measurements, args.out, written)
    for number, source in sorted(measurements.exercises.items()):
        if number in DEDICATED:
            continue
        if number == 9:  # several ops, sweeps and a training step: figures of their own
            plot_rmsnorm_peers(source, args.out, written)
            plot_rmsnorm_sweeps(source, args.out, written)
        elif any(r.get("gbps") for r in source.data["rows"] if isinstance(r, dict)):
            plot_exercise(number, source, args.out, written)
    write_sources(args.out, written)
    for name in written:
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
