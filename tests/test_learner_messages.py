"""What a learner reads in the terminal after a mistake that stops grading early: the cause said
once, first, with its line; checks that could not run counted as not run, never as failed.

Each test grades a small learner-style file (the solution of exercise 1 with one change, written
here) in the interpreter and renders the report the way `grade exercise N` does, at 80 columns."""

from __future__ import annotations

import uuid
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from grader import catalogue
from grader.commands import isolation, report
from grader.wire.results import Kind

EX1 = catalogue.get(1)
SOLUTION = EX1.solution_path.read_text()
LAUNCHER = "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_STATE_DIR", str(tmp_path / "state"))


def _grade(tmp_path: Path, text: str, *, select: str | None = None, timeout: float | None = None):
    path = tmp_path / f"learner_{uuid.uuid4().hex[:8]}.py"
    path.write_text(text)
    run = isolation.run_checks(EX1, path, seed=7, interpreter=True, select=select, check_timeout=timeout)
    console = Console(file=StringIO(), width=80, color_system=None, highlight=False)
    report.render(run, EX1, console)
    return run, console.file.getvalue()


def _said(text: str) -> str:
    """The report after its header (title, file, mode and versions), rich's wrapping undone."""
    body = text.split("\n\n", 1)[1]
    return " ".join(body.split())


def test_a_file_without_the_function_says_so_once_and_runs_nothing_else(tmp_path):
    run, text = _grade(tmp_path, "import torch\n")
    said = _said(text)
    assert said.count("does not define `add`") == 1, text
    assert "0 of 1" not in said and "performance: not measured" not in said, text
    failed = [c for c in run.checks if c.failed]
    assert len(failed) == 1 and failed[0].kind == Kind.MISSING_FUNCTION
    assert all(c.not_run for c in run.checks if not c.failed)
    assert f"(1 check failed, {len(run.checks) - 1} not run)" in said


def test_a_syntax_error_is_the_first_thing_said_with_its_line(tmp_path):
    broken = SOLUTION.replace(LAUNCHER, LAUNCHER.rstrip(":"))
    line = broken.splitlines().index(LAUNCHER.rstrip(":")) + 1
    run, text = _grade(tmp_path, broken)
    said = _said(text)
    assert said.startswith("✗ your file did not import"), text
    assert f"syntax error on line {line} (`{LAUNCHER.rstrip(':')}`): expected ':'" in said, text
    assert "grade batch" not in said and said.count("expected ':'") == 1, text
    assert not run.notices


def test_a_hang_in_the_launcher_is_reported_once_after_one_clock(tmp_path):
    hangs = SOLUTION.replace(LAUNCHER, LAUNCHER + "\n    while True:\n        pass")
    run, text = _grade(tmp_path, hangs, select="matches_reference or large", timeout=15)
    said = _said(text)
    timed_out = [c for c in run.checks if c.kind == Kind.TIMEOUT]
    assert len(timed_out) == 1, [c.name for c in timed_out]
    assert said.count("did not finish within 15 s") == 1, text
    assert f"`{timed_out[0].name}` did not finish within 15 s" in said
    not_run = [c for c in run.checks if c.not_run]
    assert len(not_run) == len(run.checks) - 1
    assert f"(1 check failed, {len(not_run)} not run)" in said
    cases = sum(1 for c in run.checks if c.name.startswith("matches_reference"))
    assert f"0 of {cases} cases passed, {cases - 1} not run" in said, text
    assert said.count("so the grader stopped") == 1, text  # the groups not run share one reason


def test_offsets_without_the_block_are_named_and_each_traffic_figure_said_once(tmp_path):
    wrong = (EX1.wrong_dir / "offsets_without_block.py").read_text()
    run, text = _grade(tmp_path, wrong, select="traffic or (matches_reference and n4093 and fp32)")
    said = _said(text)
    assert "Every program starts at element `pid`, not `pid * BLOCK_SIZE`" in said, text
    assert "is the grid too small" not in said, text  # the overlap, not a grid or a mask, is the cause
    traffic = next(c.message for c in run.checks if c.name == "traffic")
    assert "several programs stored the same elements" in traffic, traffic
    for figure in ("wrote `out` 1.33 times", "read `x` 1.33 times", "1.33× the minimum"):
        assert traffic.count(figure) == 1, (figure, traffic)


# --- exercise 8: tokens past cache_lens, NaN, and what a pass prints -----------------------------

EX8 = catalogue.get(8)
EX8_SOLUTION = EX8.solution_path.read_text()
SCORES_MASKED = 's = tl.where(valid[None, :], s * qk_scale, float("-inf"))'
ONE_CASE = "matches_reference and lens17_15"


def _grade_ex8(tmp_path: Path, text: str, select: str):
    path = tmp_path / f"decode_{uuid.uuid4().hex[:8]}.py"
    path.write_text(text)
    run = isolation.run_checks(EX8, path, seed=7, interpreter=True, select=select)
    console = Console(file=StringIO(), width=80, color_system=None, highlight=False)
    report.render(run, EX8, console)
    return run, console.file.getvalue()


@pytest.mark.parametrize("masked", ['s = tl.where(valid[None, :], s * qk_scale, 0.0)', "s = s * qk_scale"],
                         ids=["masked-to-0", "not-masked"])
def test_decode_scores_past_cache_lens_not_minus_inf_are_named(tmp_path, masked):
    assert SCORES_MASKED in EX8_SOLUTION
    run, text = _grade_ex8(tmp_path, EX8_SOLUTION.replace(SCORES_MASKED, masked), ONE_CASE)
    (failed,) = [c for c in run.checks if c.failed]
    assert failed.message.startswith("tokens past cache_lens[b] were not masked to -inf"), failed.message
    assert "float(\"-inf\")" in failed.message


def test_decode_nan_from_a_token_past_cache_lens_is_called_nan(tmp_path):
    one_past = EX8_SOLUTION.replace("        valid = tokens < end\n", "        valid = tokens <= end\n")
    assert one_past != EX8_SOLUTION
    run, _ = _grade_ex8(tmp_path, one_past, ONE_CASE)
    (failed,) = [c for c in run.checks if c.failed]
    assert failed.message.startswith("NaN in the output of sequences that have tokens: a load read past the valid "
                                     "tokens"), failed.message
    assert "token index" not in failed.message  # never matched against what another mistake computes


def test_a_passing_traffic_check_is_one_short_line_unless_verbose(tmp_path):
    run, text = _grade_ex8(tmp_path, EX8_SOLUTION, "traffic")
    assert run.passed
    (row,) = [line for line in text.splitlines() if line.startswith("✓")]
    sentence = run.checks[0].extra["traffic"]["sentence"]
    assert row.split("traffic", 1)[1].strip() == sentence.rpartition(": ")[2], text
    assert len(row) <= 80
    console = Console(file=StringIO(), width=80, color_system=None, highlight=False)
    report.render(run, EX8, console, verbose=True)
    assert " ".join(sentence.split()) in " ".join(console.file.getvalue().split())
