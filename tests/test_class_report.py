"""A class at a glance: partial credit by family of checks, the leaderboard, ranks, Gradescope's
results.json held to its documented fields, and the class report, for a real class of exercise 1 (the
solution, a natural file, known-wrong variants, a refused file and one that does not parse) graded in
the interpreter, then opened in Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from grader import catalogue
from grader.commands import batch, class_report, class_scoring, cli
from grader.catalogue import CatalogueError, Grading
from grader.wire.results import CheckRecord, Kind, PerformanceRecord, RunResult
from tests import hostile_corpus
from tests import site_helpers as helpers

EX1 = catalogue.get(1)
EX7 = catalogue.get(7)


def check(name: str, passed: bool, *, skipped=False, kind="ok", message="", performance=None) -> CheckRecord:
    return CheckRecord(f"spec::test_{name}", name, passed, skipped=skipped, kind=kind, message=message,
                       performance=performance)


PERF_SKIPPED = check("performance", False, skipped=True, kind="skipped", message="performance: not measured (no GPU)")


def measured(fraction: float, floor: float = 0.8) -> CheckRecord:
    record = PerformanceRecord(passed=fraction >= floor, verdict=f"{fraction:.0%} of the ceiling", fraction=fraction,
                               floor=floor, achieved_gbps=round(4000 * fraction), gpu="NVIDIA H200", driver="570.1")
    return check("performance", fraction >= floor, kind="ok" if fraction >= floor else "wrong",
                 message="" if fraction >= floor else f"performance: {fraction:.0%} of the ceiling, below the floor",
                 performance=record)


def scripted(results: dict[str, list[CheckRecord]], mode: str):
    def grade(exercise, path, **options):
        return RunResult(exercise=exercise.number, learner_file=str(path), seed=options.get("seed", 0), mode=mode,
                         versions={"triton": "3.6.0", "torch": "2.11.0"}, checks=results[Path(path).name])

    return grade


def graded(tmp_path: Path, results: dict[str, list[CheckRecord]], mode: str, exercise=EX1) -> list[batch.Submission]:
    folder = tmp_path / "class"
    folder.mkdir(exist_ok=True)
    for name in results:
        (folder / name).write_text("x = 1\n")
    return batch.grade_all(batch.submissions_in(folder), exercise, seed=3, grade=scripted(results, mode))


# --- Gradescope's results.json, as documented ------------------------------------------------------
# https://gradescope-autograders.readthedocs.io/en/latest/specs/ (output format) and .../leaderboards/

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
TOP_FIELDS = {"score": (int, float), "execution_time": (int, float), "output": str, "output_format": str,
              "test_output_format": str, "test_name_format": str, "visibility": str, "stdout_visibility": str,
              "extra_data": dict, "tests": list, "leaderboard": list}
TEST_FIELDS = {"score": (int, float), "max_score": (int, float), "status": str, "name": str, "name_format": str,
               "number": str, "output": str, "output_format": str, "tags": list, "visibility": str,
               "extra_data": dict}
LEADERBOARD_FIELDS = {"name": str, "value": (int, float, str), "order": str}


def gradescope_problems(results: dict) -> list[str]:
    """Every way ``results`` departs from Gradescope's documented results.json (empty: it validates)."""
    problems = []

    def fields(obj: dict, known: dict, where: str) -> None:
        for key, value in obj.items():
            if key not in known:
                problems.append(f"{where}{key} is not a documented field")
            elif isinstance(value, bool) or not isinstance(value, known[key]):
                problems.append(f"{where}{key} is {type(value).__name__}, not {known[key]}")
        for key in ("visibility", "stdout_visibility"):
            if key in obj and obj[key] not in VISIBILITY:
                problems.append(f"{where}{key} is {obj[key]!r}")

    fields(results, TOP_FIELDS, "")
    tests = results.get("tests", [])
    if "score" not in results and not all("score" in t for t in tests):
        problems.append("score is missing at the top and on some tests")
    for i, test in enumerate(tests):
        fields(test, TEST_FIELDS, f"tests[{i}].")
        if test.get("status", "passed") not in {"passed", "failed"}:
            problems.append(f"tests[{i}].status is {test['status']!r}")
        if "max_score" in test and test.get("score", 0) > test["max_score"] + 1e-9:
            problems.append(f"tests[{i}] scores above its max_score")
    for i, entry in enumerate(results.get("leaderboard", [])):
        fields(entry, LEADERBOARD_FIELDS, f"leaderboard[{i}].")
        if "name" not in entry or "value" not in entry:
            problems.append(f"leaderboard[{i}] needs a name and a value")
        if entry.get("order", "desc") not in {"asc", "desc"}:
            problems.append(f"leaderboard[{i}].order is {entry['order']!r}")
    return problems


H200_GRADESCOPE = sorted((catalogue.ROOT / "docs" / "measurements" / "h200-class-gradescope").glob("*.results.json"))


@pytest.mark.parametrize("path", H200_GRADESCOPE, ids=lambda p: p.name.split(".")[0])
def test_the_gradescope_files_written_on_the_h200_validate(path):
    """What `grade batch --gradescope` wrote on the GPU (a leaderboard with a measured fraction) is what
    Gradescope documents, and its scores add up."""
    results = json.loads(path.read_text())
    assert gradescope_problems(results) == []
    assert results["leaderboard"] and 0 < results["leaderboard"][0]["value"] <= 1.05
    assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]))


def test_the_h200_gradescope_record_is_there():
    assert len(H200_GRADESCOPE) >= 4


def test_the_validator_refuses_what_the_spec_does_not_document():
    bad = {"score": "10", "tests": [{"name": "x", "score": 3, "max_score": 2, "status": "ok"}],
           "leaderboard": [{"name": "speed", "order": "up"}], "visibilty": "visible"}
    said = " | ".join(gradescope_problems(bad))
    for expected in ("score is str", "status is 'ok'", "above its max_score", "needs a name and a value",
                     "order is 'up'", "visibilty is not a documented field"):
        assert expected in said


# --- partial credit ---------------------------------------------------------------------------------

def test_partial_credit_weighs_families_and_drops_the_ones_that_did_not_run(tmp_path):
    results = {
        "right_but_rereads.py": [check("matches_reference[n1]", True), check("matches_reference[n2]", True),
                                 check("traffic", False, message="read `x` 2.00 times"), PERF_SKIPPED],
        "half_right.py": [check("matches_reference[n1]", True), check("matches_reference[n2]", False),
                          check("traffic", True), PERF_SKIPPED],
    }
    subs = {s.path.name: s for s in graded(tmp_path, results, "interpreter")}
    # No GPU: performance drops out, correctness 60 and lessons 20 share 100 as 75 and 25.
    assert subs["right_but_rereads.py"].score(100) == 75.0
    assert subs["half_right.py"].score(100) == 62.5
    result = batch.gradescope(subs["half_right.py"], EX1, points=100, seed=3)
    tests = {t["name"]: t for t in result["tests"]}
    assert (tests["matches_reference"]["score"], tests["matches_reference"]["max_score"]) == (37.5, 75.0)
    assert (tests["traffic"]["score"], tests["traffic"]["max_score"]) == (25.0, 25.0)
    assert tests["performance"]["max_score"] == 0.0
    assert "correctness 75, lessons 25; performance: not measured (no GPU)" in result["output"]
    assert "leaderboard" not in result  # nothing was timed
    assert gradescope_problems(result) == []


def test_on_a_gpu_performance_earns_its_weight_and_fills_the_leaderboard(tmp_path):
    results = {"fast.py": [check("matches_reference[n1]", True), check("traffic", True), measured(0.91)],
               "slow.py": [check("matches_reference[n1]", True), check("traffic", True), measured(0.5)]}
    subs = {s.path.name: s for s in graded(tmp_path, results, "gpu")}
    assert subs["fast.py"].score(100) == 100.0 and subs["slow.py"].score(100) == 80.0
    result = batch.gradescope(subs["slow.py"], EX1, points=100, seed=3)
    assert result["leaderboard"] == [{"name": "fraction of the copy ceiling", "value": 0.5, "order": "desc"}]
    assert gradescope_problems(result) == []


def test_the_attention_leaderboard_is_a_fraction_of_sdpa(tmp_path):
    results = {"attn.py": [check("matches_reference[c1]", True), measured(0.64, floor=0.5)]}
    sub = graded(tmp_path, results, "gpu", exercise=EX7)[0]
    assert batch.gradescope(sub, EX7, points=10, seed=3)["leaderboard"][0]["name"] == "fraction of SDPA's throughput"


def test_a_family_weighted_zero_earns_nothing_and_the_rest_share_the_points():
    grading = Grading(weights={"correctness": 1.0, "lessons": 0.0, "performance": 3.0})
    checks = [check("matches_reference[n1]", True), check("traffic", False), check("performance", False)]
    assert class_scoring.score(checks, grading, 100) == 25.0
    assert class_scoring.shares(checks, grading, 100) == {"performance": 75.0, "correctness": 25.0, "lessons": 0.0}


# --- ranks ------------------------------------------------------------------------------------------

def test_only_a_gpu_run_has_a_fraction_to_rank_by():
    assert class_scoring.leaderboard_value("gpu", {"fraction": 0.91234, "unit": "gbps"}) == 0.9123
    assert class_scoring.leaderboard_value("interpreter", {"fraction": 0.91}) is None  # ranks from the checks alone
    assert class_scoring.leaderboard_value("gpu", {"fraction": None, "unit": "amdahl"}) is None
    assert class_scoring.leaderboard_value("gpu", None) is None


def test_ranks_share_places_within_the_margin_and_survive_noise_below_it():
    first = [class_scoring.Standing("a", 100, 0.90), class_scoring.Standing("b", 100, 0.89),
             class_scoring.Standing("c", 100, 0.80), class_scoring.Standing("d", 60, None),
             class_scoring.Standing("e", 60, None), class_scoring.Standing("f", 0, None)]
    ranks = class_scoring.ranks(first, margin=0.02)
    assert ranks == {"a": 1, "b": 1, "c": 3, "d": 4, "e": 4, "f": 6}
    # A second batch on the same card moves each fraction by less than the margin: the same ranks.
    again = [class_scoring.Standing(s.name, s.score, None if s.fraction is None else s.fraction + delta)
             for s, delta in zip(first, (-0.009, 0.009, 0.009, 0, 0, 0))]
    assert class_scoring.ranks(again, margin=0.02) == ranks
    assert class_scoring.ranks(first, margin=0.0) == {"a": 1, "b": 2, "c": 3, "d": 4, "e": 4, "f": 6}
    # A chain closer than the margin step by step: b is within the margin of both a and c, but c is
    # clearly behind a. Only a counts against c; nothing counts against b.
    chain = [class_scoring.Standing("a", 100, 0.95), class_scoring.Standing("b", 100, 0.925),
             class_scoring.Standing("c", 100, 0.90)]
    assert class_scoring.ranks(chain, margin=0.03) == {"a": 1, "b": 1, "c": 2}


def test_the_measured_batches_rank_alike_at_the_default_margin():
    """The two H200 batches of one class: at the default margin their ranks agree, and at a margin below the
    files' movement they do not (the record would not show the margin is needed otherwise)."""
    record = json.loads((catalogue.ROOT / "docs" / "measurements" / "h200-class-rank-noise.json").read_text())

    def batch(index: int, margin: float) -> dict:
        return class_scoring.ranks([class_scoring.Standing(r["file"], r["scores"][index], r["fractions"][index])
                                    for r in record["rows"]], margin)

    margin = catalogue.Grading().rank_margin
    assert batch(0, margin) == batch(1, margin)
    assert batch(0, 0.0) != batch(1, 0.0)
    assert max(r["spread"] for r in record["rows"] if r["spread"] is not None) < margin


# --- the manifest's [grading] table -----------------------------------------------------------------

@pytest.fixture
def manifest(tmp_path) -> Path:
    folder = tmp_path / catalogue.EXERCISES_FOLDER / EX1.stem
    folder.mkdir(parents=True)
    shutil.copy(EX1.manifest, folder / "exercise.toml")
    return folder / "exercise.toml"


@pytest.mark.parametrize("table,said", [
    ("[grading]\nweights = { speed = 1 }", "`grading.weights.speed` is not a field the catalogue knows"),
    ("[grading]\nweights = { lessons = -1 }", "`grading.weights.lessons` must be 0 or more"),
    ("[grading]\nweights = { correctness = 0, lessons = 0, performance = 0 }", "gives every family 0"),
    ("[grading]\nlessons = [\"performance\"]", "the performance family's check"),
    ("[grading]\nlessons = \"traffic\"", "`grading.lessons` must be a list"),
    ("[grading]\nrank_margin = 1.5", "`grading.rank_margin` must be a fraction between 0 and 1"),
    ("[grading]\nteaches = { masking = \"chapters/08_flash_attention.md\" }",
     "not one of the exercise's `chapters`"),
    ("[grading]\nranks = 3", "`grading.ranks` is not a field the catalogue knows"),
], ids=["unknown-family", "negative", "all-zero", "performance-as-lesson", "not-a-list", "margin", "chapter",
        "unknown-field"])
def test_a_wrong_grading_table_is_refused_with_a_sentence(manifest, table, said):
    text = manifest.read_text()
    text = text[:text.index("\n[grading") + 1]  # exercise 1's own table replaced by the broken one
    manifest.write_text(text + table + "\n")
    with pytest.raises(CatalogueError, match=re.escape(said)):
        catalogue.read_manifest(manifest, manifest.parents[3])


def test_the_defaults_hold_where_a_manifest_says_nothing(manifest):
    text = manifest.read_text()
    manifest.write_text(text[:text.index("# `grade batch`")])
    grading = catalogue.read_manifest(manifest, manifest.parents[3]).grading
    assert grading == Grading() and grading.weights == {"correctness": 60.0, "lessons": 20.0, "performance": 20.0}
    assert (grading.family("traffic"), grading.family("performance"), grading.family("large[fp32]")) == (
        "lessons", "performance", "correctness")


@pytest.mark.parametrize("exercise", catalogue.EXERCISES, ids=lambda e: e.stem)
def test_every_lesson_a_manifest_names_is_a_check_of_its_spec(exercise):
    spec = exercise.spec_file.read_text(encoding="utf-8")
    for name in set(exercise.grading.lessons) - set(Grading().lessons):
        assert f"def test_{name}(" in spec, f"{exercise.manifest}: [grading] lessons names {name!r}, not in the spec"
    assert set(exercise.grading.teaches.values()) <= set(exercise.chapters)


# --- the report from records with a GPU's numbers (no GPU needed) --------------------------------------

def test_a_gpu_report_plots_fractions_and_names_who_is_near_the_floor(tmp_path):
    results = {f"s{i}.py": [check("matches_reference[n1]", True), check("traffic", True), measured(f)]
               for i, f in enumerate((0.95, 0.93, 0.90, 0.81, 0.79, 0.6, 0.5))}
    results["wrong.py"] = [check("matches_reference[n1]", False, kind="masking",
                                 message="your kernel wrote 3 elements past the end of `out` (wrong.py:12)"),
                           check("traffic", True), measured(0.99)]
    subs = graded(tmp_path, results, "gpu")
    records = batch.summary(subs, EX1, seed=3, points=100, select=None)
    page = class_report.render(records, EX1)
    performance = page[page.index("<section id='performance'>"):page.index("<section id='mistakes'>")]
    assert performance.count("<img") == 1 and "not measured" not in performance
    assert "s3.py, s4.py" in performance  # 0.81 and 0.79: within 2% of the floor of 80%
    fastest = performance[performance.index("<table id='fastest'>"):]
    assert re.findall(r"(fastest|slowest)</td><td>(s\d)", fastest) == [
        ("fastest", "s0"), ("fastest", "s1"), ("fastest", "s2"), ("slowest", "s4"), ("slowest", "s5"),
        ("slowest", "s6")]  # wrong.py is the fastest file, but it is not correct
    assert "NVIDIA H200 (driver 570.1)" in page


def test_a_card_that_could_not_decide_the_floor_is_named_in_the_report(tmp_path):
    note = "on this NVIDIA H200 the input sets its memory holds move in 0.8 ms at 4,814 GB/s"
    small = measured(0.46)
    small.passed = small.performance.passed = True  # bandwidth.card_verdict: reported, not failed
    small.message, small.kind = "", Kind.OK
    small.performance.details.update(decided=False, floor_note=note)
    results = {"fast.py": [check("matches_reference[n1]", True), measured(0.9)],
               "slow.py": [check("matches_reference[n1]", True), small]}
    page = class_report.render(batch.summary(graded(tmp_path, results, "gpu"), EX1, seed=3, points=100,
                                             select=None), EX1)
    speed = page[page.index("<section id='performance'>"):page.index("<section id='mistakes'>")]
    said = speed[speed.index("id='not-decided'"):]
    assert "(1 of 2 files)" in said and "slow.py" in said.split("</p>")[0] and "fast.py" not in said.split("</p>")[0]
    assert note in said


def test_a_gpu_batch_that_timed_nothing_says_so_without_blaming_the_card(tmp_path):
    results = {"a.py": [check("matches_reference[n1]", True)], "b.py": [check("matches_reference[n1]", False)]}
    page = class_report.render(batch.summary(graded(tmp_path, results, "gpu"), EX1, seed=3, points=100,
                                             select="matches_reference"), EX1)
    speed = page[page.index("<section id='performance'>"):page.index("<section id='mistakes'>")]
    assert "no file's performance check ran to a measurement" in speed and "without a GPU" not in speed
    assert page.count("<img") == 1 and "Graded on a GPU: its name was not recorded" in page


def test_what_a_file_says_is_shown_as_text_never_as_markup(tmp_path):
    results = {"mallory.py": [check("matches_reference[n1]", False,
                                    message="<img src=x onerror=alert(1)> and `<b>` and </table>")]}
    page = class_report.render(batch.summary(graded(tmp_path, results, "interpreter"), EX1, seed=3, points=100,
                                             select="<script>"), EX1)
    assert "<img src=x" not in page and "</table> and" not in page and "<script>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt; and <code>&lt;b&gt;</code>" in page


def test_a_long_sentence_is_cut_between_words_and_outside_code():
    said = "your kernel read `x` twice: " + "and more " * 40 + "`tl.store(out_ptr + offs, x)` " + "words " * 20
    for limit in (30, 60, 400, 406, 412, 420):  # the code span holds 388 to 417, spaces inside
        clipped = class_report._clip(said, limit)
        assert len(clipped) <= limit + 2 and clipped.count("`") % 2 == 0 and clipped.endswith(" …"), clipped
    assert class_report._clip("short", 300) == "short"


def test_the_same_mistake_in_two_files_is_one_row():
    a = class_report.mistake_key("masking",
                                 "your kernel wrote 24 elements past the end of `out` (a.py:42: `tl.store(p, x)`)")
    b = class_report.mistake_key("masking", "your kernel wrote 1023 elements past the end of `out` (b.py:7)")
    assert a == b and a != class_report.mistake_key("masking", "your kernel wrote 3 elements past the end of `y`")


# --- a real class of exercise 1, graded in the interpreter ----------------------------------------------

#: The mistakes below each show in one small case and the traffic check: a ragged tail past one block.
SELECT = "(matches_reference and n1025 and fp32) or traffic or performance"


@pytest.fixture(scope="module")
def a_class(tmp_path_factory):
    """Seven files: the solution, a natural file, a missing tail mask made by two students, a kernel that
    reads `x` twice, a file the honesty check refuses and one that does not parse."""
    root = tmp_path_factory.mktemp("class")
    folder = root / "submissions"
    folder.mkdir()
    shutil.copy(EX1.solution_path, folder / "ada.py")
    shutil.copy(EX1.natural_dir / "tutorial_add.py", folder / "ben.py")
    shutil.copy(EX1.wrong_dir / "no_tail_mask.py", folder / "cleo.py")
    shutil.copy(EX1.wrong_dir / "no_tail_mask.py", folder / "dan.py")
    shutil.copy(EX1.wrong_dir / "reads_x_twice.py", folder / "eve.py")
    hostile_corpus.one("ex01/thread").copy_into(folder, "fay.py")  # the work in a thread: refused
    (folder / "gus.py").write_text("def add(x, y)\n    return x + y\n")
    out, report = root / "out", root / "report.html"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRADE_STATE_DIR", str(root / "state"))
        code = cli.main(["batch", str(folder), "--exercise", "1", "--select", SELECT, "--seed", "11", "--jobs", "2",
                         "--interpreter", "--out", str(out), "--gradescope", "--report", str(report)])
    return {"code": code, "out": out, "report": report}


def test_the_class_report_ranks_the_mistakes_and_says_performance_was_not_measured(a_class):
    assert a_class["code"] == cli.EXIT_FAILED
    page = a_class["report"].read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page and "<script" not in page  # opens with no network
    assert page.count("<img class='plot'") == 1  # the scores; no speeds without a GPU
    assert "Performance was not measured" in page and "Triton's interpreter on the CPU" in page
    mistakes = re.findall(r"<tr><td>(\d+)</td><td>(\d) of 7</td><td>([^<]+)<br>", page)
    assert mistakes == [("1", "2", "a read or write outside a tensor"),
                        ("2", "1", "wrong answer, or a rule of the exercise broken")]
    checks = dict(re.findall(r"<tr><td><code>(\w+)</code></td><td>\w+</td><td>(\d of \d)</td></tr>", page))
    assert checks == {"matches_reference": "3 of 5", "traffic": "2 of 5"}  # fay.py and gus.py ran no check
    assert "seen by cleo.py, dan.py" in page and "3. Masking pitfalls" in page and "1. Memory-bound reasoning" in page
    refused = page[page.index("<section id='refused'>"):]
    assert "fay.py</b>: the class grader refuses this file" in refused and "gus.py</b> could not be graded" in refused
    ranks = dict((name, int(rank)) for rank, name in re.findall(r"<tr><td>(\d+)</td><td>(\w+\.py)</td>", page))
    assert ranks == {"ada.py": 1, "ben.py": 1, "eve.py": 3, "cleo.py": 4, "dan.py": 4, "fay.py": 4, "gus.py": 4}


def test_the_class_gradescope_files_validate_and_keep_the_leaderboard_hidden(a_class):
    files = sorted((a_class["out"] / "gradescope").glob("*.results.json"))
    assert len(files) == 7
    for path in files:
        results = json.loads(path.read_text())
        assert gradescope_problems(results) == [], path.name
        assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]), abs=0.01)
        assert "leaderboard" not in results  # no GPU: nothing was timed
    eve = json.loads((a_class["out"] / "gradescope" / "eve.results.json").read_text())
    assert eve["score"] == 75.0 and "correctness 75, lessons 25" in eve["output"]


def test_the_class_report_renders_in_a_browser(a_class, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    chromium, driver_path, reason = helpers.find_chromium()
    if reason:
        pytest.skip(reason)
    driver = helpers.start_chromium(chromium, driver_path, tmp_path / "profile")
    try:
        driver.get(a_class["report"].as_uri())
        WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        images = driver.execute_script("return Array.from(document.images)"
                                       ".map(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().width])")
        assert images and all(done and natural > 300 and shown > 100 for done, natural, shown in images)
        rows = driver.execute_script("return Array.from(document.querySelectorAll('#mistakes-table tr')).slice(1)"
                                     ".map(r => parseInt(r.cells[1].innerText))")
        assert rows == sorted(rows, reverse=True) and rows[0] == 2
        text = driver.execute_script("return document.body.innerText")
        for raw in ("<", ">", "&lt;", "&amp;", "`", "**"):
            assert raw not in text, f"the report shows raw markup {raw!r}"
        assert driver.execute_script("return document.querySelectorAll('code').length") > 0
    finally:
        driver.quit()


def test_the_card_section_names_the_sandbox_the_class_ran_in():
    from grader.learner import sandbox

    rows = [class_report.Row(name=f"{i}.py", score=0.0, passed=False, mode="interpreter", fraction=None,
                             result={"sandbox": sandbox.DESCRIPTIONS["partial"]}, error=None, first_failure="")
            for i in range(2)]
    section = class_report._card_section(rows)
    assert section.count("The submissions ran partly sandboxed") == 1, section
