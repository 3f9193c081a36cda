"""The `grade` command through `grader.commands.cli.main`: list, hint tiers, solution, reset, bench without a
GPU, usage errors, one real grading run recorded in the progress file, and the watch loop."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from grader import catalogue
from grader.commands import cli, progress_file, regrade_on_save, workspace
from grader.wire.results import CheckRecord as CheckResult, RunResult
from tests.grading import pristine_stub

ROOT = catalogue.ROOT
EX1 = catalogue.get(1)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    monkeypatch.setenv("GRADE_STATE_DIR", str(folder))
    return folder


def grade(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr, with rich's line wrapping undone (runs of whitespace -> one space)."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), " ".join(err.split())


def mark_passed(number: int) -> None:
    progress_file.record_run(number, RunResult(exercise=number, learner_file="x.py", seed=1, mode="interpreter",
                                          checks=[CheckResult("a", "a", True)]))


# --- usage and list ---------------------------------------------------------------------------

ONE_PAST_THE_LAST = str(len(catalogue.EXERCISES) + 1)


@pytest.mark.parametrize("argv", [["exercise", "99"], ["hint", "0"], ["solution", ONE_PAST_THE_LAST], ["exercise"],
                                  ["batch", "tests"], ["nonsense"], []],
                         ids=["no-exercise-99", "no-exercise-0", "no-exercise-after-the-last", "missing-N", "batch-without-N",
                              "unknown-command", "no-command"])
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = grade(capsys, *argv)
    assert code == cli.EXIT_USAGE
    assert "Traceback" not in out + err


def test_list_shows_every_exercise_and_the_next_step(capsys):
    code, out, _ = grade(capsys, "list")
    assert code == 0
    for exercise in catalogue.EXERCISES:
        assert exercise.title.split(":")[0] in out
    assert f"0 of {len(catalogue.EXERCISES)} exercises passed" in out
    assert "Next: exercise 1" in out and "not started" in out


def test_list_shows_state_best_fraction_and_date(capsys, state_dir):
    state_dir.mkdir()
    (state_dir / "progress.json").write_text(json.dumps({"exercises": {
        "1": {"state": "passed", "passed_at": "2026-12-01 10:00", "best_fraction": 0.93, "best_gbps": 3980.0},
        "2": {"state": "failing", "last_run": "2026-12-02 11:30"}}}))
    code, out, _ = grade(capsys, "list")
    assert code == 0
    assert "passed" in out and "93%" in out and "3980 GB/s" in out and "2026-12-01 10:00" in out
    assert "failing" in out and "2026-12-02 11:30" in out
    assert f"1 of {len(catalogue.EXERCISES)} exercises passed" in out and "█" in out
    assert "Next: exercise 2" in out


def test_list_survives_a_corrupt_progress_file(capsys, state_dir):
    state_dir.mkdir()
    (state_dir / "progress.json").write_text('{"exercises": {"1": {"state": "pas')
    code, out, err = grade(capsys, "list")
    assert code == 0 and "0 of" in out
    assert "could not be read" in err and "Traceback" not in err


# --- hints and solution ---------------------------------------------------------------------------

def test_hints_arrive_one_tier_at_a_time(capsys):
    n = len(EX1.hints)
    assert n >= 2
    _, first, _ = grade(capsys, "hint", "1")
    assert f"Hint 1 of {n}" in first and f"Hint 2 of {n}" not in first and "again for the next one" in first
    _, second, _ = grade(capsys, "hint", "1")
    assert f"Hint 2 of {n}" in second
    for _ in range(n):
        _, last, _ = grade(capsys, "hint", "1")
    assert f"Hint {n} of {n}" in last and "That was the last hint" in last
    code, out, _ = grade(capsys, "hint", "1", "--reset")
    assert code == 0 and "start over" in out
    _, again, _ = grade(capsys, "hint", "1")
    assert f"Hint 1 of {n}" in again and f"Hint 2 of {n}" not in again
    _, everything, _ = grade(capsys, "hint", "1", "--all")
    assert all(f"Hint {i} of {n}" in everything for i in range(1, n + 1))


@pytest.mark.parametrize("exercise", [e for e in catalogue.EXERCISES if e.hints], ids=lambda e: f"ex{e.number:02d}")
def test_every_hint_prints_exactly_its_source_text(capsys, exercise):
    """Hints are code-heavy (`add_kernel[grid](x, y, out, n, ...)`): rich markup must not eat a
    bracket. Every tier, printed, holds its catalogue text unchanged (rich's wrapping undone)."""
    _, everything, _ = grade(capsys, "hint", str(exercise.number), "--all")
    for i, hint in enumerate(exercise.hints, start=1):
        assert " ".join(hint.split()) in everything, f"hint {i} of exercise {exercise.number} printed differently"
    assert any("[" in hint for e in catalogue.EXERCISES for hint in e.hints), "no hint holds a bracket to test"


def test_solution_is_refused_before_a_pass(capsys):
    code, out, _ = grade(capsys, "solution", "1")
    assert code == cli.EXIT_FAILED
    assert "shown once your own file passes" in out and "grade hint 1" in out and "def add(" not in out


def test_solution_after_a_pass_shows_commentary_then_code(capsys):
    mark_passed(1)
    code, out, _ = grade(capsys, "solution", "1")
    assert code == 0
    commentary, code_text = workspace.split_solution(EX1.solution_path.read_text())
    assert "In this exercise you will learn" in commentary and code_text.startswith("import torch")
    assert out.count("In this exercise you will learn") == 1  # the docstring is not repeated in the code
    assert out.index("you will learn") < out.index("def add_kernel") < out.index("def add(")
    assert "diff -u exercises/ex01_vector_add.py solutions/ex01_vector_add.py" in out


def test_solution_force_shows_it_and_says_so(capsys):
    code, out, _ = grade(capsys, "solution", "1", "--force")
    assert code == 0 and "--force" in out and "def add(" in out


def _rejoined(rendered: str) -> list[str]:
    """The code lines of a terminal rendering, each line's continuation rows joined back onto it."""
    from grader.commands.solution_view import CONTINUED

    lines: list[str] = []
    width = 0  # the gutter's: "12 │ " and "   ↪   " are as wide
    for row in rendered.splitlines():
        gutter, bar, text = row.partition(" │ ")
        if bar and gutter.strip().isdigit():
            lines.append(text)
            width = len(gutter) + len(bar)
        elif lines and row[:width].strip() == CONTINUED:
            lines[-1] += row[width:]
    return lines


@pytest.mark.parametrize("number", [e.number for e in catalogue.EXERCISES if e.solution_path.is_file()])
def test_solution_in_an_80_column_terminal_shows_every_code_line_whole(number):
    from grader.commands import solution_view

    exercise = catalogue.get(number)
    commentary, code = workspace.split_solution(exercise.solution_path.read_text())
    console = Console(file=StringIO(), width=80, force_terminal=True, color_system=None)
    solution_view.render(console, title=exercise.solution_file, commentary=commentary, code=code)
    rendered = console.file.getvalue()
    from rich.cells import cell_len

    assert max(cell_len(row) for row in rendered.splitlines()) <= 80
    assert [line.rstrip() for line in _rejoined(rendered)] == [line.rstrip() for line in code.splitlines()]
    if any(len(line) > 74 for line in code.splitlines()):
        assert solution_view.CONTINUED in rendered


def test_solution_piped_prints_every_line_as_in_the_file(capsys):
    mark_passed(8)
    assert cli.main(["solution", "8"]) == 0
    out = capsys.readouterr().out
    _, code = workspace.split_solution(catalogue.get(8).solution_path.read_text())
    printed = set(out.splitlines())
    assert any(len(line) > 80 for line in code.splitlines())  # the case this test is about
    assert [line for line in code.splitlines() if line.rstrip() not in printed] == []


def test_solution_as_html_is_one_local_page_after_a_pass(capsys, tmp_path):
    page = tmp_path / "ex01.html"
    code, out, _ = grade(capsys, "solution", "1", "--html", str(page))
    assert code == cli.EXIT_FAILED and not page.exists()
    mark_passed(1)
    code, out, _ = grade(capsys, "solution", "1", "--html", str(page))
    assert code == 0 and "ex01.html" in out
    text = page.read_text()
    import html as html_module
    import re

    plain = html_module.unescape(re.sub(r"<[^>]+>", "", text))
    commentary, source = workspace.split_solution(EX1.solution_path.read_text())
    assert all(line.strip() in plain for line in source.splitlines())
    assert "<h2" in text or "<ul>" in text  # the commentary is HTML, not raw Markdown
    assert not re.search(r"(src|href)=\"(https?:)?//", text)  # nothing fetched from elsewhere


def test_split_solution_without_a_docstring_keeps_all_the_code():
    assert workspace.split_solution("import torch\nx = 1\n") == ("", "import torch\nx = 1\n")
    assert workspace.split_solution("def broken(:\n") == ("", "def broken(:\n")


# --- reset ----------------------------------------------------------------------------------------

def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Course Test", "-c", "user.email=test@example.invalid",
                    "-c", "commit.gpgsign=false", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def learner_repo(tmp_path, monkeypatch):
    """A git checkout holding exercise 1's stub as committed; the catalogue points at it."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "course"
    (repo / "exercises").mkdir(parents=True)
    pristine_stub(EX1, repo / "exercises")
    _git(repo, "init", "-q")
    _git(repo, "add", EX1.learner_file)
    _git(repo, "commit", "-q", "-m", "stub")
    monkeypatch.setattr(catalogue, "ROOT", repo)
    return repo


def test_reset_with_nothing_changed_says_so(capsys, learner_repo, state_dir):
    code, out, _ = grade(capsys, "reset", "1")
    assert code == 0 and "Nothing to reset" in out
    assert not (state_dir / "backups").exists()


def test_reset_twice_keeps_both_backups_and_restores_the_stub(capsys, learner_repo, state_dir):
    learner = learner_repo / EX1.learner_file
    stub = learner.read_bytes()
    learner.write_text("# my first attempt\n")
    code, out, _ = grade(capsys, "reset", "1")
    assert code == 0 and "Your file was saved to" in out
    assert learner.read_bytes() == stub
    learner.write_text("# my second attempt\n")
    code, out, _ = grade(capsys, "reset", "1")
    assert code == 0
    backups = sorted((state_dir / "backups").iterdir())
    assert [b.read_text() for b in sorted(backups, key=lambda p: p.stat().st_mtime_ns)] == [
        "# my first attempt\n", "# my second attempt\n"]
    assert all(b.name.startswith("ex01_vector_add.") and b.suffix == ".py" for b in backups)
    assert str(backups[-1].name) in out or any(b.name in out for b in backups)
    assert learner.read_bytes() == stub


def test_reset_of_a_deleted_file_restores_it_without_a_backup(capsys, learner_repo, state_dir):
    learner = learner_repo / EX1.learner_file
    stub = learner.read_bytes()
    learner.unlink()
    code, out, _ = grade(capsys, "reset", "1")
    assert code == 0 and learner.read_bytes() == stub and "saved to" not in out


def test_reset_outside_git_refuses_and_touches_nothing(capsys, tmp_path, monkeypatch):
    folder = tmp_path / "no-git"
    (folder / "exercises").mkdir(parents=True)
    learner = folder / EX1.learner_file
    learner.write_text("# my work\n")
    monkeypatch.setattr(catalogue, "ROOT", folder)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # do not find a repository above tmp
    code, out, _ = grade(capsys, "reset", "1")
    assert code == cli.EXIT_FAILED and "not inside a git checkout" in out
    assert learner.read_text() == "# my work\n"


def test_reset_of_an_unknown_ref_refuses(capsys, learner_repo):
    learner = learner_repo / EX1.learner_file
    learner.write_text("# mine\n")
    code, out, _ = grade(capsys, "reset", "1", "--ref", "no-such-branch")
    assert code == cli.EXIT_FAILED and "git has no copy" in out and learner.read_text() == "# mine\n"


def test_backup_names_never_collide(tmp_path):
    names = {workspace.backup_path(tmp_path, Path("ex01_vector_add.py"), stamp="20261201-100000") for _ in range(3)}
    assert sorted(p.name for p in names) == ["ex01_vector_add.20261201-100000-2.py",
                                             "ex01_vector_add.20261201-100000-3.py",
                                             "ex01_vector_add.20261201-100000.py"]


# --- bench without a GPU ----------------------------------------------------------------------------

def test_bench_without_a_gpu_says_why(capsys):
    code, out, _ = grade(capsys, "bench", "1")
    assert code == cli.EXIT_FAILED and "needs an NVIDIA GPU" in out and "grade exercise 1" in out


@pytest.mark.parametrize("exercise", [e for e in catalogue.EXERCISES if e.bench is None], ids=lambda e: e.stem)
def test_bench_of_an_exercise_without_a_bench_says_so(capsys, exercise):
    code, out, _ = grade(capsys, "bench", str(exercise.number))
    assert code == cli.EXIT_FAILED and f"no bench for exercise {exercise.number}" in out


def test_bench_from_a_missing_file_is_a_usage_error(capsys, tmp_path):
    code, _, err = grade(capsys, "bench", "1", "--from", str(tmp_path / "nothing.py"))
    assert code == cli.EXIT_USAGE and "no file at" in err


# --- one real grading run --------------------------------------------------------------------------

def test_grading_the_stub_records_failing_and_keeps_the_solution_hidden(capsys, state_dir, tmp_path, monkeypatch):
    # The stub as committed stands in for the learner's file, which a learner who passed has changed.
    stub = pristine_stub(catalogue.get(1), tmp_path)
    monkeypatch.setattr(catalogue.Exercise, "learner_path", property(lambda exercise: stub))
    code, out, _ = grade(capsys, "exercise", "1", "--interpreter", "--seed", "5")
    assert code == cli.EXIT_FAILED and "not implemented yet" in out
    entry = json.loads((state_dir / "progress.json").read_text())["exercises"]["1"]
    assert entry["state"] == "failing" and entry["mode"] == "interpreter"
    code, out, _ = grade(capsys, "list")
    assert "failing" in out
    code, out, _ = grade(capsys, "solution", "1")
    assert code == cli.EXIT_FAILED and "did not pass" in out


# --- watch ----------------------------------------------------------------------------------------

def fake_run(exercise: catalogue.Exercise, passed: bool) -> RunResult:
    return RunResult(exercise=exercise.number, learner_file=str(exercise.learner_path), seed=3, mode="interpreter",
                     checks=[CheckResult("spec::test_x", "matches_reference[n3-fp32]", passed,
                                         message="" if passed else "wrong at index 2")])


class Recorder:
    """A grading function that records what it graded and returns scripted verdicts."""

    def __init__(self, verdicts=None, interrupt_on: int | None = None):
        self.graded: list[tuple[int, str]] = []
        self.verdicts = list(verdicts or [])
        self.interrupt_on = interrupt_on

    def __call__(self, exercise, path):
        self.graded.append((exercise.number, Path(path).read_text()))
        if self.interrupt_on is not None and len(self.graded) == self.interrupt_on:
            raise KeyboardInterrupt
        return fake_run(exercise, self.verdicts.pop(0) if self.verdicts else False)


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "exercises"
    folder.mkdir()
    paths = {1: folder / "ex01_vector_add.py", 2: folder / "ex02_bias_gelu.py"}
    for number, path in paths.items():
        path.write_text(f"# exercise {number}, first version\n")
    return paths


def session(files, grader, *, follow=False, advance=None):
    out = StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    s = regrade_on_save.Session(EX1, grade=grader, console=console, follow=follow, path_for=lambda e: files[e.number],
                         advance=advance or (lambda: catalogue.get(2)), clear=False)
    return s, out


def test_a_save_triggers_exactly_one_regrade(files):
    grader = Recorder()
    s, out = session(files, grader)
    target = str(files[1])

    def batches():
        yield {(2, str(files[2]))}  # another exercise's file: nothing to do
        files[1].write_text("# exercise 1, second version\n")
        yield {(1, target), (2, target), (2, target)}  # one save = truncate, write, rename: one batch
        yield {(2, target)}  # saved again without a change (focus lost): not graded again
        files[1].write_text("# exercise 1, third version\n")
        yield {(2, target)}

    assert regrade_on_save.watch_loop(batches(), s) == 0
    assert [text for _, text in grader.graded] == ["# exercise 1, first version\n", "# exercise 1, second version\n",
                                                   "# exercise 1, third version\n"]
    screen = out.getvalue()
    assert "wrong at index 2" in screen and "Ctrl-C to stop" in screen and "Stopped watching after 3 grading runs" in screen


def test_ctrl_c_while_waiting_exits_cleanly(files):
    grader = Recorder()
    s, out = session(files, grader)

    def batches():
        raise KeyboardInterrupt
        yield  # pragma: no cover

    assert regrade_on_save.watch_loop(batches(), s) == 0
    assert len(grader.graded) == 1 and "Stopped watching after 1 grading run." in out.getvalue()


def test_ctrl_c_during_a_grading_run_exits_cleanly(files):
    grader = Recorder(interrupt_on=2)
    s, out = session(files, grader)

    def batches():
        files[1].write_text("# changed\n")
        yield {(2, str(files[1]))}
        pytest.fail("the loop must stop at the interrupt")

    assert regrade_on_save.watch_loop(batches(), s) == 0
    assert "Stopped watching" in out.getvalue()


def test_each_run_is_recorded_in_the_progress_file(files):
    s, _ = session(files, Recorder(verdicts=[False]))
    regrade_on_save.watch_loop([], s)
    assert progress_file.load().exercise(1)["state"] == "failing"


def test_following_the_course_moves_on_after_a_pass(files):
    grader = Recorder(verdicts=[True, False])
    s, out = session(files, grader, follow=True)

    def batches():
        files[1].write_text("# exercise 1 again\n")
        yield {(2, str(files[1]))}  # no longer watched: exercise 1 passed
        files[2].write_text("# exercise 2, my attempt\n")
        yield {(2, str(files[2]))}

    regrade_on_save.watch_loop(batches(), s)
    assert grader.graded == [(1, "# exercise 1, first version\n"), (2, "# exercise 2, my attempt\n")]
    assert "Next: exercise 2" in out.getvalue() and progress_file.load().passed(1)


def test_a_missing_file_waits_instead_of_failing(files):
    grader = Recorder()
    s, out = session(files, grader)
    files[1].unlink()
    regrade_on_save.watch_loop([{(3, str(files[1]))}], s)
    assert grader.graded == [] and "is missing; waiting" in " ".join(out.getvalue().split())


def test_file_changes_yields_one_batch_for_a_save(files):
    pytest.importorskip("watchfiles")
    stop = threading.Event()
    folder = files[1].parent

    def save_later():
        time.sleep(0.5)
        files[1].write_text("# saved\n")
        (folder / "notes.txt").write_text("not python")

    threading.Thread(target=save_later, daemon=True).start()
    timer = threading.Timer(8.0, stop.set)  # never hang the suite
    timer.start()
    try:
        batch = next(iter(regrade_on_save.file_changes(folder, stop_event=stop)), set())
    finally:
        stop.set()
        timer.cancel()
    paths = {Path(p).name for _, p in batch}
    assert "ex01_vector_add.py" in paths and "notes.txt" not in paths
