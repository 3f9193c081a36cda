"""The course holds together: every solution passes, every stub says "not implemented yet",
every known-wrong variant is rejected with the message it was written to provoke, and no file
exists that the catalogue does not name."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from rich.console import Console

from grader import catalogue, report
from tests.grading import ROOT, failure_messages, grade, pristine_stub, variant_metadata, wrong_variants

READY = [e for e in catalogue.EXERCISES if e.spec_file.is_file() and e.solution_path.is_file()]

F32 = 4
F16 = 2
#: Bytes each solution must move in its spec's traffic check, by hand: {tensor: (loaded, stored)}.
EXPECTED_TRAFFIC = {
    # n = 3 * 1024 + 7 fp32: x and y read once, out written once; the masked tail lanes not counted.
    1: {"x": (3079 * F32, 0), "y": (3079 * F32, 0), "out": (0, 3079 * F32)},
    # 7 x 1031, flat: x once, out once; the bias is gathered at offs % N, so every row re-reads
    # it (7 times: from L2 on a GPU, which is why only x's passes are held to the lesson).
    2: {"x": (7 * 1031 * F32, 0), "bias": (7 * 1031 * F32, 0), "out": (0, 7 * 1031 * F32)},
    # 5 x 781, one block of 1024 per row: each row read once and written once.
    3: {"x": (5 * 781 * F32, 0), "out": (0, 5 * 781 * F32)},
    # 11 x 781 on a grid of 8 programs: still each row read once.
    4: {"x": (11 * 781 * F32, 0), "out": (0, 11 * 781 * F32)},
    # 2 x (3 * 8192 + 5): two reads of each row (statistics, then normalize), one write.
    5: {"x": (2 * 2 * 24581 * F32, 0), "out": (0, 2 * 24581 * F32)},
    # B 2, H_q 8, H_kv 2 (G 4), D 64, page 16, cache_lens (100, 37), fp16; a block table of 8 pages
    # (128 tokens, 4 tiles of 32) on the interpreter's 8-program wave: 2 splits of 64 tokens.
    # K and V: the 137 valid rows of both KV heads once. q: each of the 2 x 2 x 2 split programs loads
    # its group's 4 rows (2 reads of q). block_table: one int32 per valid token and KV head; cache_lens:
    # once per split program (8) and per combine program (16). Partials (m, l, acc) of the 3 splits
    # that hold tokens (2 + 1) x 8 heads: written once, read back once by the combine kernel.
    8: {"q": (2 * 2 * 2 * 4 * 64 * F16, 0), "k_cache": (137 * 2 * 64 * F16, 0), "v_cache": (137 * 2 * 64 * F16, 0),
        "block_table": (137 * 2 * 4, 0), "cache_lens": ((8 + 16) * 4, 0), "out": (0, 2 * 8 * 64 * F16),
        "allocation #2": (24 * F32, 24 * F32), "allocation #3": (24 * F32, 24 * F32),
        "allocation #4": (24 * 64 * F32, 24 * 64 * F32)},
    # RMSNorm's forward, 13 x 781: x read once, y ("out") written once, rstd (the second allocation)
    # one float32 per row; every program reads the weight (13 times: from L2 on a GPU).
    9: {"x": (13 * 781 * F32, 0), "weight": (13 * 781 * F32, 0), "out": (0, 13 * 781 * F32),
        "allocation #2": (0, 13 * F32)},
    # 4 x (3 * 8192 + 5), no row ignored: the logits read twice and overwritten once with the gradient;
    # the targets read by the count kernel and the main kernel; the loss ("out") written once; the row
    # losses (allocation #2) written and summed; the count (allocation #3) written once, read by each row.
    10: {"logits": (2 * 4 * 24581 * F32, 4 * 24581 * F32), "target": (2 * 4 * 8, 0), "out": (0, F32),
         "allocation #2": (4 * F32, 4 * F32), "allocation #3": (4 * F32, F32)},
}


@pytest.mark.parametrize("exercise", READY, ids=lambda e: f"ex{e.number:02d}")
def test_solution_passes(exercise):
    run = grade(exercise.number, exercise.solution_path)
    assert run.mode == "interpreter"
    assert run.passed, f"solution {exercise.solution_file} failed: {failure_messages(run)}"
    perf = [c for c in run.checks if c.name == "performance"]
    if perf:  # never reported as passed without a GPU
        assert perf[0].skipped and not perf[0].passed
        assert "not measured (no GPU)" in perf[0].message
    traffic = run.extra("traffic")
    if exercise.number in EXPECTED_TRAFFIC:
        assert traffic is not None, "the traffic check recorded nothing"
        counted = {name: (t["loaded"], t["stored"]) for name, t in traffic["tensors"].items()}
        assert counted == EXPECTED_TRAFFIC[exercise.number]
        # The grading page's table (docs/assets/traffic-table.txt) must say what the grader counts.
        from docs.scripts.traffic_table import row

        table = (ROOT / "docs" / "assets" / "traffic-table.txt").read_text()
        assert row(exercise.number, exercise.slug, traffic) in table, (
            "docs/assets/traffic-table.txt is out of date: run python docs/scripts/traffic_table.py")


@pytest.mark.parametrize("exercise", READY, ids=lambda e: f"ex{e.number:02d}")
def test_stub_says_not_implemented(exercise, tmp_path):
    run = grade(exercise.number, pristine_stub(exercise, tmp_path))
    assert not run.passed
    messages = failure_messages(run)
    assert messages, "the stub produced no failing check"
    assert messages[0].startswith("not implemented yet"), messages[0]
    assert "Traceback" not in messages[0]


VARIANTS = wrong_variants()


@pytest.mark.parametrize("number,path", VARIANTS, ids=[f"ex{n:02d}-{p.stem}" for n, p in VARIANTS])
def test_wrong_variant_rejected_with_its_message(number, path):
    meta = variant_metadata(path)
    assert meta["EXPECTED"], f"{path} must say which message the grader gives (EXPECTED = ...)"
    run = grade(number, path, select=meta["SELECT"], timeout=meta["TIMEOUT"])
    assert not run.passed, f"{path.name} was not rejected"
    messages = failure_messages(run)
    assert any(meta["EXPECTED"] in m for m in messages), (
        f"{path.name}: expected a failure containing {meta['EXPECTED']!r}, got {messages[:3]}"
    )
    assert not any("Traceback" in m for m in messages)
    lines = report_lines(run, number)
    assert fits(lines), "\n".join(lines)


def report_lines(run, number: int) -> list[str]:
    """The text report as a learner's 80-column terminal shows it."""
    console = Console(file=StringIO(), width=80, force_terminal=False, color_system=None)
    report.render(run, catalogue.get(number), console)
    return console.file.getvalue().rstrip("\n").split("\n")


def fits(lines: list[str]) -> bool:
    """At most 40 lines at 80 columns; only the lines printed whole for copying (the file's path,
    the replay and `grade show` commands) may run past 80 and then count as the terminal wraps them."""
    copied = [line for line in lines if line.startswith(("Replay these", "See what your kernel", "/"))]
    from rich.cells import cell_len  # columns on screen: x̂ is two code points and one column

    rows = sum(-(-max(cell_len(line), 1) // 80) for line in lines)
    return rows <= 40 and all(cell_len(line) <= 80 for line in lines if line not in copied)


def test_a_diagnosis_repeated_in_every_case_is_one_message():
    """`other=0.0` on exercise 3, every check run: the same diagnosis in many cases is shown once with
    a count, the whole report fits 40 lines of 80 columns, and the header does not wrap."""
    run = grade(3, catalogue.get(3).wrong_dir / "no_other_inf.py")
    failed = [c for c in run.checks if c.failed]
    assert len(failed) >= 10
    lines = report_lines(run, 3)
    text = "\n".join(lines)
    assert fits(lines), text
    assert text.count("masked lanes were loaded as 0") == 1, text
    assert "the same in" in text and "more cases" in text and "see --json" in text
    assert lines[0].startswith("Exercise 3 ") and lines[2].startswith("Triton interpreter (no GPU) · seed"), text
    assert "This is not a special case" in json.dumps(report.to_json(run)), "the fully masked row names the cause"


def test_every_exercise_file_is_in_the_catalogue():
    named = {e.learner_file for e in catalogue.EXERCISES} | {e.solution_file for e in catalogue.EXERCISES}
    for folder in ("exercises", "solutions"):
        for path in (ROOT / folder).glob("*.py"):
            if path.name == "__init__.py":
                continue
            assert f"{folder}/{path.name}" in named, f"{folder}/{path.name} is not in grader/catalogue.py"


def test_catalogue_numbers_are_consecutive_and_files_mirror():
    numbers = [e.number for e in catalogue.EXERCISES]
    assert numbers == list(range(1, len(numbers) + 1))
    for e in catalogue.EXERCISES:
        assert e.learner_file.removeprefix("exercises/") == e.solution_file.removeprefix("solutions/")
