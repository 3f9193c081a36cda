"""The class at a glance: one self-contained HTML file from a batch's records (`grade batch --report`).

It reads what `grade batch` writes to ``summary.json`` (one record per file, each with its run's JSON
verdict) and the exercise's manifest, and answers an instructor's next questions: how the scores and
the speeds spread against the floor, which mistakes the class made most (each with the sentence the
students saw and the chapter that teaches it), the fastest and slowest correct kernels, the files
refused by the honesty check, and the card and versions it was all graded on. Plots are PNGs inlined
as base64, the style sheet is inline: the file opens anywhere, with no network.

Every text that comes from a submission (its name, its messages) is escaped before it is placed.
Without a GPU the report says that performance was not measured rather than plotting nothing.
"""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader import catalogue
from grader.commands import class_scoring

#: What each failure kind means, in the instructor's words (`grader.wire.results.Kind`'s values).
KIND_WORDS = {
    "wrong": "wrong answer, or a rule of the exercise broken",
    "masking": "a read or write outside a tensor",
    "coverage": "output left unwritten, or an input overwritten",
    "not_implemented": "the stub, not implemented",
    "import": "the file does not import",
    "fatal": "a CUDA error",
    "setup": "the grader could not start the file's process (this machine's sandbox setup)",
    "crash": "the process died",
    "timeout": "ran past its clock",
}
#: Kinds that are no mistake in the kernel: the checks not run after a stop, the honesty check's refusal
#: (its own section), checks passed or skipped by design.
NOT_MISTAKES = {"ok", "not_run", "rejected", "skipped"}
#: How many of the fastest and of the slowest correct kernels the report lists.
FASTEST_SHOWN = 3

_LOCATION = re.compile(r" \([^\s()]+\.py:\d+(?:: `[^`]*`)?\)")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CODE = re.compile(r"`([^`]+)`")


@dataclass
class Mistake:
    """One mistake of the class: the same kind of failure with the same sentence up to its numbers."""

    kind: str
    sentence: str  # what the first student who made it read
    chapter: str
    checks: list[str] = field(default_factory=list)
    students: list[str] = field(default_factory=list)


@dataclass
class Row:
    """One submission as the report uses it."""

    name: str
    score: float
    passed: bool
    mode: str
    fraction: float | None
    result: dict | None
    error: str | None
    first_failure: str

    @property
    def checks(self) -> list[dict]:
        return list((self.result or {}).get("checks") or [])

    @property
    def performance(self) -> dict:
        return dict((self.result or {}).get("performance") or {})


def mistake_key(kind: str, message: str) -> str:
    """The same mistake in every file: the location in the file and the numbers taken out."""
    return f"{kind}:{_NUMBER.sub('N', _LOCATION.sub('', message)).strip()}"


def rows_of(records: dict) -> list[Row]:
    rows = []
    for record in records.get("submissions") or []:
        result = record.get("result")
        mode = str((result or {}).get("mode") or record.get("mode") or "")
        fraction = class_scoring.leaderboard_value(mode, (result or {}).get("performance"))
        rows.append(Row(name=Path(str(record.get("file"))).name, score=float(record.get("score") or 0.0),
                        passed=bool(record.get("passed")), mode=mode, fraction=fraction, result=result,
                        error=record.get("error"), first_failure=str(record.get("first_failure") or "")))
    return rows


def chapter_for(exercise: catalogue.Exercise, check: str, kind: str) -> str:
    """The chapter that teaches a mistake: the manifest's ``teaches`` by check, kind, family; else the first."""
    grading = exercise.grading
    group = check.split("[", 1)[0]
    for key in (group, kind, grading.family(check)):
        if key in grading.teaches:
            return grading.teaches[key]
    return exercise.chapters[0] if exercise.chapters else ""


def mistakes(rows: list[Row], exercise: catalogue.Exercise) -> list[Mistake]:
    """The class's mistakes, most students first (each student counted once per mistake)."""
    found: dict[str, Mistake] = {}
    for row in rows:
        for check in row.checks:
            kind = str(check.get("kind") or "wrong")
            if check.get("passed") or kind in NOT_MISTAKES:
                continue
            message, name = str(check.get("message") or kind), str(check.get("name") or "")
            key = mistake_key(kind, message)
            mistake = found.setdefault(key, Mistake(kind=kind, sentence=message,
                                                    chapter=chapter_for(exercise, name, kind)))
            group = name.split("[", 1)[0]
            if group and group not in mistake.checks:
                mistake.checks.append(group)
            if row.name not in mistake.students:
                mistake.students.append(row.name)
    return sorted(found.values(), key=lambda m: (-len(m.students), m.kind, m.sentence))


def correct(row: Row, grading: catalogue.Grading) -> bool:
    """Every correctness check that counted passed (lessons and performance aside)."""
    family = [c for c in row.checks if grading.family(str(c.get("name") or "")) == "correctness"
              and not (c.get("skipped") and c.get("kind") != "not_run")]
    return row.error is None and bool(family) and all(c.get("passed") for c in family)


# --- rendering ---------------------------------------------------------------------------------------

def render(records: dict, exercise: catalogue.Exercise) -> str:
    """The report: one HTML document, every plot and style inline."""
    rows = rows_of(records)
    grading = exercise.grading
    measured = [r for r in rows if r.fraction is not None]
    ranks = class_scoring.ranks([class_scoring.Standing(r.name, r.score, r.fraction) for r in rows],
                                grading.rank_margin)
    title = f"Exercise {exercise.number} · {exercise.title}"
    points = float(records.get("points") or 100.0)
    passed = sum(1 for r in rows if r.passed)
    parts = [
        f"<h1>{_text(title)}: the class at a glance</h1>",
        f"<p class='meta'>{len(rows)} submissions, {passed} passed; graded {_text(str(records.get('created', '')))} "
        f"with seed {_text(str(records.get('seed')))} (replay one with <code>grade exercise {exercise.number} "
        f"--from FILE --seed {_text(str(records.get('seed')))}</code>)"
        + (f"; only the checks matching <code>{_text(str(records['select']))}</code>" if records.get("select") else "")
        + ".</p>",
        _card_section(rows),
        _scores_section(rows, points, grading),
        _performance_section(measured, exercise, on_gpu=any(r.mode == "gpu" for r in rows)),
        _mistakes_section(mistakes(rows, exercise), len(rows)),
        _ranks_section(rows, ranks, grading),
        _refused_section(rows),
    ]
    return _PAGE.format(title=_text(title), style=_STYLE, body="\n".join(parts))


def _card_section(rows: list[Row]) -> str:
    modes = sorted({r.mode for r in rows if r.mode and r.mode != "unknown"})
    gpus = sorted({f"{r.performance.get('gpu')}" + (f" (driver {r.performance['driver']})"
                                                    if r.performance.get("driver") else "")
                   for r in rows if r.performance.get("gpu")})
    versions = sorted({", ".join(f"{k} {v}" for k, v in sorted((r.result or {}).get("versions", {}).items()))
                       for r in rows if (r.result or {}).get("versions")})
    if "gpu" in modes:
        card = "on a GPU: " + ("; ".join(_text(g) for g in gpus) if gpus else "its name was not recorded")
    elif modes:
        card = "in Triton's interpreter on the CPU (no GPU): correctness and lessons only, performance not measured"
    else:
        card = "nowhere: no file reached the grader's checks"
    items = [f"<li>Graded {card}.</li>"]
    if len(modes) > 1:
        items.append("<li>Warning: the class was graded in more than one mode "
                     f"({', '.join(_text(m) for m in modes)}); its speeds cannot be compared.</li>")
    for line in versions:
        items.append(f"<li>Versions: {_text(line)}.</li>")
    for level in sorted({(r.result or {}).get("sandbox") for r in rows if (r.result or {}).get("sandbox")}):
        items.append(f"<li>The submissions ran {_text(level)}.</li>")
    return f"<section id='card'><h2>The card and versions</h2><ul>{''.join(items)}</ul></section>"


def _scores_section(rows: list[Row], points: float, grading: catalogue.Grading) -> str:
    weights = ", ".join(f"{family} {grading.weights.get(family, 0):g}" for family in catalogue.FAMILIES)
    lessons = ", ".join(f"<code>{_text(name)}</code>" for name in grading.lessons)
    plot = _image(_score_histogram([r.score for r in rows], points), "Distribution of the class's scores")
    return (f"<section id='scores'><h2>Scores</h2>{plot}{_checks_table(rows, grading)}"
            f"<p>Partial credit by family of checks, weighted {weights}: each family present earns its weight "
            f"times the share of its checks that passed, scaled to {points:g} points; a family with no check in "
            f"the run (performance without a GPU) leaves its weight to the others. Lessons are the checks "
            f"{lessons}; performance is the timed check; every other check is correctness.</p></section>")


def _checks_table(rows: list[Row], grading: catalogue.Grading) -> str:
    """Per check, as nbgrader and otter-grader give per question: how many files passed every case of it."""
    ran: dict[str, list[bool]] = {}
    for row in rows:
        cases: dict[str, bool] = {}
        for c in row.checks:
            if c.get("skipped") or c.get("kind") == "rejected":
                continue  # skipped by design or not run after a stop: the file did not meet this check
            group = str(c.get("name") or "").split("[", 1)[0]
            cases[group] = cases.get(group, True) and bool(c.get("passed"))
        for group, passed in cases.items():
            ran.setdefault(group, []).append(passed)
    if not ran:
        return ""
    body = "".join(f"<tr><td><code>{_text(group)}</code></td><td>{_text(grading.family(group))}</td>"
                   f"<td>{sum(results)} of {len(results)}</td></tr>" for group, results in ran.items())
    return ("<table id='checks-table'><caption>Each check: the files that passed every one of its cases, of the "
            f"files it ran on</caption><tr><th>check</th><th>family</th><th>files</th></tr>{body}</table>")


def _performance_section(measured: list[Row], exercise: catalogue.Exercise, *, on_gpu: bool) -> str:
    grading = exercise.grading
    head = f"<section id='performance'><h2>Speed against the floor ({_text(grading.leaderboard)})</h2>"
    if not measured and on_gpu:
        return (head + "<p class='notice'>Performance was not measured: no file's performance check ran to a "
                "measurement (was it left out by <code>--select</code>, or did every file fail before it?)."
                "</p></section>")
    if not measured:
        return (head + "<p class='notice'>Performance was not measured: these files were graded without a GPU "
                "(timing Triton's interpreter would measure Python, not memory). Grade the class on a GPU for "
                "the distribution of speeds, the fastest and slowest kernels and the leaderboard.</p></section>")
    floor = exercise.floor
    plot = _image(_fraction_plot(measured, floor, grading.leaderboard),
                  f"Each file's {grading.leaderboard} against the floor")
    from grader import bandwidth  # here: it imports torch, which a report of the interpreter's class never needs

    noise = bandwidth.GRADING_NOISE
    near = [r for r in measured if floor is not None and abs(r.fraction - floor) <= noise]
    near_text = (f"<p>Within {noise * 100:.0f} points of the floor ({floor:.0%}), as far as one grading of a kernel "
                 f"moved from the next on the H200, where a second run may land on the other side: "
                 f"{', '.join(_text(r.name) for r in near)}.</p>" if near else
                 f"<p>No file lies within {noise * 100:.0f} points of the floor, as far as one grading of a kernel "
                 "moved from the next on the H200.</p>" if floor is not None else
                 "<p>This exercise has no floor.</p>")
    undecided = [r for r in measured if r.performance.get("decided") is False]
    if undecided:  # bandwidth.card_verdict: under the floor on a card whose plan says it cannot measure it
        near_text += (f"<p class='notice' id='not-decided'>Not decided on this card ({len(undecided)} of "
                      f"{len(measured)} files): under the floor on a card that cannot measure it honestly, so they "
                      f"were not failed for it: {', '.join(_text(r.name) for r in undecided)}. "
                      f"{_text(undecided[0].performance.get('floor_note') or '')}</p>")
    fast = sorted((r for r in measured if correct(r, grading)), key=lambda r: -r.fraction)
    if len(fast) > 2 * FASTEST_SHOWN:
        shown = [("fastest", r) for r in fast[:FASTEST_SHOWN]] + [("slowest", r) for r in fast[-FASTEST_SHOWN:]]
    else:
        shown = [("", r) for r in fast]
    body = "".join(f"<tr><td>{which}</td><td>{_text(r.name)}</td><td>{r.fraction:.1%}</td>"
                   f"<td>{_speed(r.performance)}</td></tr>" for which, r in shown)
    table = (f"<table id='fastest'><caption>The fastest and slowest correct kernels</caption><tr><th></th>"
             f"<th>file</th><th>{_text(grading.leaderboard)}</th><th>measured</th></tr>{body}</table>"
             if shown else "<p>No correct kernel was timed.</p>")
    return head + plot + near_text + table + "</section>"


def _speed(performance: dict) -> str:
    if performance.get("achieved_gbps"):
        return f"{performance['achieved_gbps']:.0f} GB/s"
    if performance.get("tflops"):
        return f"{performance['tflops']:.0f} TFLOP/s"
    return f"{performance['ms']:.3f} ms" if performance.get("ms") else ""


def _mistakes_section(found: list[Mistake], class_size: int) -> str:
    head = "<section id='mistakes'><h2>The class's mistakes, most common first</h2>"
    if not found:
        return head + "<p>No file made a mistake the checks name.</p></section>"
    body = []
    for rank, m in enumerate(found, start=1):
        chapter = _chapter(m.chapter)
        body.append(f"<tr><td>{rank}</td><td>{len(m.students)} of {class_size}</td>"
                    f"<td>{_text(KIND_WORDS.get(m.kind, m.kind))}<br><span class='small'>"
                    f"{', '.join(_text(c) for c in m.checks)}</span></td>"
                    f"<td>{_sentence(m.sentence)}<br><span class='small'>seen by "
                    f"{', '.join(_text(s) for s in m.students)}</span></td><td>{chapter}</td></tr>")
    return (head + "<table id='mistakes-table'><tr><th>#</th><th>students</th><th>kind (checks)</th>"
            "<th>what they read</th><th>the chapter that teaches it</th></tr>" + "".join(body) + "</table></section>")


def _ranks_section(rows: list[Row], ranks: dict[str, int], grading: catalogue.Grading) -> str:
    ordered = sorted(rows, key=lambda r: (ranks[r.name], r.name))
    body = "".join(
        f"<tr><td>{ranks[r.name]}</td><td>{_text(r.name)}</td><td>{r.score:g}</td>"
        f"<td>{'passed' if r.passed else 'failed'}</td>"
        f"<td>{f'{r.fraction:.1%}' if r.fraction is not None else 'not measured'}</td>"
        f"<td>{_sentence(_clip(r.first_failure, 300))}</td></tr>" for r in ordered)
    return ("<section id='ranks'><h2>Ranks</h2><p>A file's rank is one more than the number of files that did "
            "clearly better: a higher score, or the same score and a "
            f"{_text(grading.leaderboard)} more than {grading.rank_margin * 100:g} points above its own, where a GPU "
            f"measured it. Files within {grading.rank_margin * 100:g} points of each other share a rank, so that the "
            "card's noise from one batch to the next does not reorder them. Without a GPU ranks come from the "
            "checks alone: the same files and seed rank the same way again.</p>"
            f"<table id='ranks-table'><tr><th>rank</th><th>file</th><th>score</th><th>verdict</th>"
            f"<th>{_text(grading.leaderboard)}</th><th>first failure</th></tr>{body}</table></section>")


def _refused_section(rows: list[Row]) -> str:
    items = []
    for r in rows:
        refusal = next((c for c in r.checks if c.get("kind") == "rejected"), None)
        if refusal is not None:
            items.append(f"<li><b>{_text(r.name)}</b>: {_sentence(str(refusal.get('message') or ''))}</li>")
        elif r.error:
            items.append(f"<li><b>{_text(r.name)}</b> could not be graded: {_sentence(r.error)}</li>")
    body = f"<ul>{''.join(items)}</ul>" if items else "<p>Every file could be graded.</p>"
    return ("<section id='refused'><h2>Files refused by the honesty check, or not graded</h2>"
            f"{body}</section>")


# --- pieces -----------------------------------------------------------------------------------------

def _text(value: str) -> str:
    return html.escape(str(value), quote=True)


def _sentence(value: str) -> str:
    """A learner's sentence: escaped, with its `code` spans set as code."""
    return _CODE.sub(r"<code>\1</code>", _text(value))


def _clip(value: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word and never inside a `code` span."""
    if len(value) <= limit:
        return value
    cut = value[:limit].rsplit(" ", 1)[0]
    if cut.count("`") % 2:
        cut = cut[:cut.rindex("`")].rstrip()
    return cut + " …"


def _chapter(path: str) -> str:
    if not path:
        return ""
    page = catalogue.ROOT / "docs" / path
    title = path
    try:
        first = page.read_text(encoding="utf-8").splitlines()[0]
        if first.startswith("# "):
            title = first[2:].strip()
    except (OSError, IndexError):
        pass
    return f"{_text(title)}<br><span class='small'>docs/{_text(path)}</span>"


def _image(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f"<img class='plot' alt='{_text(alt)}' src='data:image/png;base64,{data}'>"


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, plt.subplots(figsize=(7.5, 2.8), dpi=110)


def _png(plt, fig) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def _score_histogram(scores: list[float], points: float) -> bytes:
    plt, (fig, ax) = _figure()
    bins = [points * i / 10 for i in range(11)]
    ax.hist([min(max(s, 0.0), points) for s in scores], bins=bins, color="#3f6fb5", edgecolor="white")
    ax.set_xlim(0, points)
    ax.set_xlabel(f"score (out of {points:g})")
    ax.set_ylabel("files")
    ax.yaxis.get_major_locator().set_params(integer=True)
    return _png(plt, fig)


def _fraction_plot(rows: list[Row], floor: float | None, label: str) -> bytes:
    plt, (fig, ax) = _figure()
    ordered = sorted(rows, key=lambda r: r.fraction)
    ys = range(len(ordered))
    ax.scatter([r.fraction for r in ordered], list(ys), c=["#2e8b57" if r.passed else "#d2691e" for r in ordered],
               zorder=3)
    if floor is not None:
        ax.axvline(floor, color="#b22222", linestyle="--", label=f"floor {floor:.0%}")
    ax.axvline(1.0, color="#555555", linestyle=":", label=f"1.0: {label.removeprefix('fraction of ')}")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([r.name for r in ordered], fontsize=7)
    # From just below the floor or the slowest file, whichever is lower: a class of correct kernels sits within
    # a few points of each other (3.4-4.5 points on the H200), which a scale from 0 would press into one dot.
    low = min([r.fraction for r in ordered] + ([floor] if floor is not None else []))
    ax.set_xlim(max(0.0, low - 0.05), max(1.02, max(r.fraction for r in ordered) + 0.02))
    ax.set_xlabel(label)
    # Beside the axes, not on them: inside, it covered the slowest files.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return _png(plt, fig)


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f5f8; } caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
code { background: #f1f1f1; padding: 0 0.2em; border-radius: 3px; }
.small { color: #666; font-size: 0.85em; } .meta { color: #444; }
.notice { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.6em 0.8em; }
img.plot { max-width: 100%; display: block; margin: 0.5em 0; }
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}: the class at a glance</title>
<style>{style}</style>
</head>
<body>
{body}
</body>
</html>
"""
