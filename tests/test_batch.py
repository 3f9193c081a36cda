"""`grade batch`: a folder holding a copy of the solution, known-wrong variants and a file that does
not parse, graded for real (one check each, to stay fast); then scoring and the Gradescope format
with a scripted grader."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from grader import catalogue
from grader.commands import batch, cli
from grader.wire.results import CheckRecord as CheckResult, RunResult

ROOT = catalogue.ROOT
EX1 = catalogue.get(1)
WRONG = catalogue.get(1).wrong_dir
#: One case that every mistake below shows up in: a ragged tail past one block.
SELECT = "matches_reference and n1025 and fp32"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_STATE_DIR", str(tmp_path / "state"))


def test_batch_over_a_class_folder(tmp_path, capsys):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    shutil.copy(EX1.solution_path, submissions / "alice.py")
    shutil.copy(WRONG / "no_tail_mask.py", submissions / "bob.py")
    shutil.copy(WRONG / "kernel_raises.py", submissions / "carol.py")
    (submissions / "dave.py").write_text("def add(x, y)\n    return x + y\n")  # does not parse
    (submissions / "notes.txt").write_text("not a submission")
    out = tmp_path / "out"

    code = cli.main(["batch", str(submissions), "--exercise", "1", "--select", SELECT, "--seed", "7", "--jobs", "2",
                     "--interpreter", "--out", str(out), "--gradescope", "--points", "10"])
    printed = " ".join(capsys.readouterr().out.split())
    assert code == cli.EXIT_FAILED  # not every submission passed
    assert "1 of 4 submissions passed" in printed and "--seed 7" in printed
    assert str(out / "summary.csv") in printed or "summary.csv" in printed

    with open(out / "summary.csv", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"alice.py", "bob.py", "carol.py", "dave.py"}
    assert rows["alice.py"]["passed"] == "True" and float(rows["alice.py"]["score"]) == 10.0
    assert rows["bob.py"]["passed"] == "False" and float(rows["bob.py"]["score"]) == 0.0
    assert "past the end of `out`" in rows["bob.py"]["first_failure"]
    assert "NameError" in rows["carol.py"]["first_failure"]
    assert "does not parse" in rows["dave.py"]["first_failure"] and "line 1" in rows["dave.py"]["first_failure"]
    assert all(float(r["max_score"]) == 10.0 for r in rows.values())

    summary = json.loads((out / "summary.json").read_text())
    assert summary["exercise"] == 1 and summary["seed"] == 7 and summary["select"] == SELECT
    by_name = {Path(s["file"]).name: s for s in summary["submissions"]}
    assert by_name["alice.py"]["result"]["passed"] is True
    assert by_name["dave.py"]["result"] is None and "does not parse" in by_name["dave.py"]["error"]

    for name in ("alice", "bob", "carol", "dave"):
        results = json.loads((out / "gradescope" / f"{name}.results.json").read_text())
        assert set(results) >= {"score", "tests", "output", "execution_time", "visibility"}
        assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]))
        for test in results["tests"]:
            assert set(test) >= {"name", "score", "max_score", "output"}
    bob = json.loads((out / "gradescope" / "bob.results.json").read_text())
    assert bob["tests"][0]["status"] == "failed" and "past the end of `out`" in bob["tests"][0]["output"]
    assert "grade exercise 1 --from bob.py --seed 7" in bob["output"]


def test_usage_errors(tmp_path, capsys):
    assert cli.main(["batch", str(tmp_path / "missing"), "--exercise", "1"]) == cli.EXIT_USAGE
    assert cli.main(["batch", str(tmp_path), "--exercise", "1"]) == cli.EXIT_USAGE  # no *.py
    (tmp_path / "a.py").write_text("x = 1\n")
    assert cli.main(["batch", str(tmp_path), "--exercise", "99"]) == cli.EXIT_USAGE
    assert cli.main(["batch", str(tmp_path), "--exercise", "1", "--jobs", "0"]) == cli.EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err


# --- scoring and formats with a scripted grader ----------------------------------------------------

def scripted(results: dict[str, list[CheckResult] | Exception]):
    def grade(exercise, path, **options):
        outcome = results[Path(path).name]
        if isinstance(outcome, Exception):
            raise outcome
        return RunResult(exercise=exercise.number, learner_file=str(path), seed=options.get("seed", 0),
                         mode="interpreter", checks=outcome)

    return grade


def check(name: str, passed: bool, *, skipped=False, kind="ok", message="") -> CheckResult:
    return CheckResult(f"spec::test_{name}", name, passed, skipped=skipped, kind=kind, message=message)


PERF_SKIPPED = check("performance", False, skipped=True, message="performance: not measured (no GPU)")


def test_scores_count_run_checks_and_ignore_checks_skipped_by_design(tmp_path):
    for name in ("full.py", "half.py", "stub.py", "crashes_grader.py"):
        (tmp_path / name).write_text("x = 1\n")
    grade = scripted({
        "full.py": [check("matches_reference[n1]", True), check("matches_reference[n2]", True), PERF_SKIPPED],
        "half.py": [check("matches_reference[n1]", True), check("matches_reference[n2]", False, message="off"),
                    PERF_SKIPPED],
        "stub.py": [check("matches_reference[n1]", False, kind="not_implemented", message="not implemented yet: x"),
                    check("matches_reference[n2]", False, skipped=True, kind="not_run", message="not run"),
                    PERF_SKIPPED],
        "crashes_grader.py": OSError("disk full"),
    })
    subs = batch.grade_all(batch.submissions_in(tmp_path), EX1, seed=1, grade=grade, jobs=2)
    scores = {s.path.name: (s.passed, s.score(100)) for s in subs}
    assert scores == {"crashes_grader.py": (False, 0.0), "full.py": (True, 100.0), "half.py": (False, 50.0),
                      "stub.py": (False, 0.0)}
    crashed = next(s for s in subs if s.path.name == "crashes_grader.py")
    assert "the grader failed on crashes_grader.py: OSError: disk full" in crashed.failures()[0]


def test_gradescope_results_for_a_single_submission(tmp_path):
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "ex01_vector_add.py").write_text("x = 1\n")
    grade = scripted({"ex01_vector_add.py": [check("matches_reference[n1]", True),
                                             check("matches_reference[n2]", False, message="wrote past the end"),
                                             check("large[fp32]", True), PERF_SKIPPED]})
    subs = batch.grade_all(batch.submissions_in(tmp_path / "submission"), EX1, seed=3, grade=grade)
    out = tmp_path / "results"
    written = batch.write_outputs(subs, EX1, out, seed=3, points=30, select=None, gradescope_format=True)
    assert out / "results.json" in written  # where Gradescope reads it: /autograder/results/results.json
    results = json.loads((out / "results.json").read_text())
    assert results["score"] == 20.0
    tests = {t["name"]: t for t in results["tests"]}
    assert tests["matches_reference"] == {"name": "matches_reference", "score": 10.0, "max_score": 20.0,
                                          "status": "failed", "visibility": "visible",
                                          "output": "1 of 2 cases passed.\n[n2] wrote past the end"}
    assert tests["large"]["score"] == tests["large"]["max_score"] == 10.0 and tests["large"]["status"] == "passed"
    assert tests["performance"]["max_score"] == 0.0 and "not measured" in tests["performance"]["output"]
    assert sum(t["max_score"] for t in results["tests"]) == pytest.approx(30)


@pytest.mark.parametrize("content,expected", [
    (b"def add(x, y)\n", "does not parse: SyntaxError at line 1"),
    (b"\xff\xfe\x00garbage", "is not text in its declared encoding"),
    (b"x = 1\x00\n", "does not parse"),
    (b"x = 1\n", None),
    ("# -*- coding: latin-1 -*-\n# caf\xe9 au lait\nx = 1\n".encode("latin-1"), None),  # PEP 263, as Python reads it
    (b"# caf\xe9\nx = 1\n", "is not text in its declared encoding"),
], ids=["syntax", "binary", "null-byte", "fine", "latin-1-declared", "latin-1-undeclared"])
def test_precheck(tmp_path, content, expected):
    path = tmp_path / "s.py"
    path.write_bytes(content)
    said = batch.precheck(path)
    assert (said is None) if expected is None else (expected in said)


def test_a_file_that_cannot_be_graded_still_gets_a_gradescope_result(tmp_path):
    (tmp_path / "broken.py").write_text("def add(:\n")
    subs = batch.grade_all([tmp_path / "broken.py"], EX1, seed=1, grade=scripted({}))
    result = batch.gradescope(subs[0], EX1, points=100, seed=1)
    assert result["score"] == 0.0 and result["tests"][0]["max_score"] == 100
    assert "does not parse" in result["tests"][0]["output"] and result["tests"][0]["status"] == "failed"


# --- what the class folder holds: links and odd names -----------------------------------------------

def test_a_symbolic_link_is_refused_and_any_file_name_is_graded(tmp_path, capsys):
    """A link to the course's solution would be graded as the student's 100/100; a file named like an
    option (`-k.py`) is still a file."""
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    shutil.copy(EX1.solution_path, submissions / "-k.py")
    shutil.copy(EX1.solution_path, submissions / "--display.py")
    (submissions / "mallory.py").symlink_to(EX1.solution_path)
    (submissions / "trudy.py").symlink_to(tmp_path / "nowhere.py")  # a dangling link is refused the same way
    out = tmp_path / "out"
    code = cli.main(["batch", str(submissions), "--exercise", "1", "--select", SELECT, "--seed", "7", "--jobs", "2",
                     "--interpreter", "--out", str(out), "--gradescope"])
    printed = " ".join(capsys.readouterr().out.split())
    assert code == cli.EXIT_FAILED
    assert "mallory.py is a symbolic link, not a file" in printed and "trudy.py is a symbolic link" in printed
    with open(out / "summary.csv", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"-k.py", "--display.py", "mallory.py", "trudy.py"}
    for honest in ("-k.py", "--display.py"):
        assert rows[honest]["passed"] == "True", rows[honest]
    for link in ("mallory.py", "trudy.py"):
        assert rows[link]["passed"] == "False" and float(rows[link]["score"]) == 0.0
        assert rows[link]["first_failure"].startswith(f"{link} is a symbolic link, not a file"), rows[link]
    by_name = {Path(s["file"]).name: s for s in json.loads((out / "summary.json").read_text())["submissions"]}
    assert "symbolic link" in by_name["mallory.py"]["error"] and by_name["mallory.py"]["result"] is None
    gradescope = json.loads((out / "gradescope" / "mallory.results.json").read_text())
    assert gradescope["score"] == 0.0 and "symbolic link" in gradescope["tests"][0]["output"]
    assert (submissions / "mallory.py").is_symlink()  # the class folder as it was


def test_a_file_named_like_an_option_is_graded_with_grade_exercise(tmp_path, monkeypatch):
    """`grade exercise 1 --from ./-k.py`: the name travels as `--display=-k.py`, a value."""
    from grader.commands import isolation

    shutil.copy(EX1.solution_path, tmp_path / "-k.py")
    monkeypatch.chdir(tmp_path)
    run = isolation.run_checks(EX1, Path("./-k.py"), seed=7, interpreter=True, select=SELECT)
    assert run.fatal is None and run.passed, [c.message for c in run.checks]


def test_a_report_path_in_the_way_costs_the_report_not_the_batch(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "a.py").write_text("x = 1\n")
    subs = batch.grade_all([tmp_path / "class" / "a.py"], EX1, seed=1,
                           grade=scripted({"a.py": [check("matches_reference[n1]", True), PERF_SKIPPED]}))
    (tmp_path / "report.html").mkdir()  # a folder where the report should go
    writer = batch.OutputWriter(tmp_path / "out", EX1, seed=1, points=100, select=None, gradescope_format=False,
                                report=tmp_path / "report.html")
    written = writer.finish(subs)
    assert tmp_path / "out" / "summary.csv" in written and tmp_path / "report.html" not in written
    assert writer.problems == [f"could not write {tmp_path / 'report.html'}: a folder is in the way; "
                               "the other results are written"]
    writer.report = tmp_path / "fine.html"
    assert tmp_path / "fine.html" in writer.finish(subs)
    assert "a.py" in (tmp_path / "fine.html").read_text() and "Performance was not measured" in (
        tmp_path / "fine.html").read_text()


def test_a_gpu_run_gets_its_traffic_checks_from_the_interpreter():
    """On a GPU the traffic checks skip (bytes are counted by the interpreter) and the L2 serves a second
    read of an input, so a class graded there runs them again in the interpreter (`count_traffic`):
    exercise 1's file that reads `x` twice fails there, as it does on a laptop."""
    from grader.commands import isolation

    exercise = catalogue.get(1)
    wrong = exercise.wrong_dir / "reads_x_twice.py"
    nodeid = "grader/exercises/ex01_vector_add/spec.py::test_traffic"
    run = RunResult(exercise=1, learner_file=str(wrong), seed=5)
    run.mode = "gpu"
    run.checks = [CheckResult("spec.py::test_large[fp32]", "large[fp32]", True),
                  CheckResult(nodeid, "traffic", False, skipped=True, message="counted in the interpreter")]
    counted = isolation.count_traffic(run, exercise, wrong, seed=5, interpreter=False, select=None)
    traffic = [c for c in counted.checks if c.name.startswith("traffic")]
    assert len(traffic) == 1 and traffic[0].failed, traffic
    assert "read `x` 2.00 times" in traffic[0].message, traffic[0].message
    assert [c.name for c in counted.checks][0] == "large[fp32]"
    # A batch's --select narrows them as it narrows the GPU run: one that leaves no traffic check changes nothing.
    run.checks[1] = CheckResult(nodeid, "traffic", False, skipped=True, message="counted in the interpreter")
    narrowed = isolation.count_traffic(run, exercise, wrong, seed=5, select="matches_reference and n1025")
    assert narrowed is run and narrowed.checks[1].skipped
    selected = isolation.count_traffic(run, exercise, wrong, seed=5, select="(matches_reference and n1025) or traffic")
    assert [c.failed for c in selected.checks if c.name.startswith("traffic")] == [True]
    interpreted = RunResult(exercise=1, learner_file=str(wrong), seed=5)
    interpreted.mode = "interpreter"
    assert isolation.count_traffic(interpreted, exercise, wrong, seed=5) is interpreted  # nothing to redo
