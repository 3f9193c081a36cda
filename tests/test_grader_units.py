"""Unit tests of the grader's parts: byte model, guards, comparison messages, fraction verdicts,
the ceiling cache, the JSON contract, crash and restart handling."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import torch

from grader import bandwidth, catalogue
from grader.commands import report
from grader.judge import clock, compare
from grader.wire import guards
from grader.wire.failures import GradeFailure, describe_exception
from grader.wire.results import CheckRecord as CheckResult, RunResult
from grader.exercises.ex01_vector_add.spec import minimum_bytes


def test_the_twins_round_is_taken_off_each_call_unless_it_is_as_long_as_the_calls():
    times, overhead, note = clock.per_call_ms([7.4, 7.5, 7.6, 7.4, 9.9], 0.7, 8)
    assert overhead == 0.7 and note is None and times[0] == pytest.approx((7.4 - 0.7) / 8)
    # A twin as slow as the learner's rounds would leave a time of zero (and a division by it): nothing taken off.
    times, overhead, note = clock.per_call_ms([0.5, 0.6, 0.55, 0.5, 0.6], 0.8, 8)
    assert overhead == 0.0 and min(times) > 0 and "nothing was subtracted" in note and "0.80 ms" in note


#: Two gradings of exercise 1 in one H100 batch (2026-12-07, docs/measurements/h100-class-rank-noise.json):
#: the solution's rounds and twin as they usually are, and grid_stride_loop's twin at 6-40 ms, which gave it
#: 443% of the ceiling. One call moves 2,516,582,400 bytes; the ceiling was 3035.5 GB/s.
SOLUTION_ROUNDS = ([9.90077, 7.51501, 7.62953, 7.62973, 7.46753], [0.74105, 0.65474, 0.75444, 0.70589, 0.72212], 0.82998)
BROKEN_TWIN_ROUNDS = ([10.88114, 7.6888, 7.68941, 7.69243, 7.81756], [6.19619, 39.80078, 10.77136, 28.37078, 20.94447],
                      0.86854)
FASTEST_CALL_MS = 2_516_582_400 / 3035.5e9 * 1e3


@pytest.mark.parametrize("guard", ["ceiling", "do_bench", "both"])
def test_a_twin_that_measured_something_else_is_not_subtracted(guard):
    """Taken off the rounds, the broken twin left calls quicker than the memory allows and 4.6 times quicker
    than do_bench: either guard alone subtracts nothing; the solution's grading keeps its subtraction."""
    fastest = FASTEST_CALL_MS if guard in ("ceiling", "both") else None
    raw, twin, dobench = BROKEN_TWIN_ROUNDS
    times, overhead, note = clock.per_call_ms(raw, min(twin), 8, fastest_call_ms=fastest,
                                              dobench_ms=dobench if guard in ("do_bench", "both") else None)
    assert overhead == 0.0 and times == [t / 8 for t in raw]
    assert "6.20 ms" in note and "nothing was subtracted" in note
    assert ("quicker than the memory can move" in note) if fastest else ("4.6 times quicker than do_bench" in note)
    fraction = FASTEST_CALL_MS / statistics.median(times)
    assert 0.8 < fraction < 1.0  # 90%: an honest verdict, where subtracting gave 443%
    raw, twin, dobench = SOLUTION_ROUNDS
    times, overhead, note = clock.per_call_ms(raw, min(twin), 8, fastest_call_ms=fastest, dobench_ms=dobench)
    assert note is None and overhead == min(twin)
    assert round(FASTEST_CALL_MS / statistics.median(times), 3) == 0.951  # the 95% the batch graded
    # Without either guard the broken twin is taken off, as before: 443%.
    times, _, note = clock.per_call_ms(*BROKEN_TWIN_ROUNDS[:1], min(BROKEN_TWIN_ROUNDS[1]), 8)
    assert note is None and round(FASTEST_CALL_MS / statistics.median(times), 2) == 4.43


#: The pipes and arenas every runner is given, beside what `LearnerProcess.runner_options` adds.
RUNNER_PIPES = ["--requests", "3", "--replies", "4", "--arena-in", "5:64", "--arena-out", "6:64"]


def test_the_clocks_twin_starts_no_cupti_and_a_learners_process_does():
    from grader.judge.learner_process import LearnerProcess
    from grader.learner import runner

    twin = LearnerProcess.clock_twin()
    learner = LearnerProcess(catalogue.get(1).solution_path, mode="gpu")
    twin_args = runner._parse(RUNNER_PIPES + twin.runner_options(Path("/scratch/clock_twin.py")))
    learner_args = runner._parse(RUNNER_PIPES + learner.runner_options(Path("/scratch/ex01_vector_add.py")))
    assert (twin_args.untraced, twin_args.mode, twin_args.display) == (True, "gpu", "grader/learner/clock_twin.py")
    assert (learner_args.untraced, learner_args.mode) == (False, "gpu")


def test_the_timings_event_carries_only_a_few_short_steps_of_what_the_learners_process_said():
    from grader.judge.plugin import reported_steps

    assert reported_steps({"torch": 1.3, "file_imported": 1.43}) == {"torch": 1.3, "file_imported": 1.43}
    assert reported_steps({"torch": "not a number"}) == {"torch": "not a number"}  # text, cut short, kept as text
    assert reported_steps({"x" * 100: ["y"] * 10_000}) == {"x" * 40: str(["y"] * 10_000)[:60]}
    assert reported_steps({str(i): i for i in range(13)}) is None
    assert reported_steps(["torch", 1.3]) is None and reported_steps(None) is None


def test_vector_add_byte_model_counts_two_reads_and_one_write():
    assert minimum_bytes(1000, 4) == 12_000
    assert minimum_bytes(1 << 28, 4) == 3 * 2**30  # the H200 benchmark moves 3 GiB
    assert minimum_bytes(7, 2) == 42


def test_gbps_is_bytes_over_time():
    assert bandwidth.gbps(4_000_000_000, 1.0) == pytest.approx(4000.0)
    assert bandwidth.gbps(3 * 2**30, 0.73734) == pytest.approx(4368.7, rel=1e-4)  # the H200 figure


@pytest.mark.parametrize("fraction,passed", [(0.5, False), (0.79, False), (0.8, True), (1.0, True), (1.02, True), (1.2, False)])
def test_fraction_verdict(fraction, passed):
    ok, sentence = bandwidth.fraction_verdict(fraction, 0.8)
    assert ok is passed
    if fraction > bandwidth.MEASUREMENT_ERROR_FRACTION:
        assert "measurement error" in sentence
    # Within the grading noise of the floor the verdict says so, and keeps its pass or fail.
    assert ("another grading may" in sentence) is (abs(fraction - 0.8) < bandwidth.GRADING_NOISE)


def test_a_verdict_near_its_floor_says_which_way_another_grading_may_go():
    assert bandwidth.fraction_verdict(0.82, 0.8) == (True, "82% of the ceiling (floor 80%); within 5 points of the "
                                                     "floor, as far as one grading of the same kernel moved from the "
                                                     "next on the H200: another grading may fall below it")
    ok, sentence = bandwidth.fraction_verdict(0.78, 0.8)
    assert not ok and sentence.endswith("another grading may pass, a faster kernel will")
    assert bandwidth.fraction_verdict(0.9, 0.8) == (True, "90% of the ceiling (floor 80%)")


def test_ceiling_cache_round_trip_is_keyed_by_gpu_and_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path))
    ceiling = bandwidth.Ceiling(gpu="NVIDIA H200", driver="580.159.04", ceiling_gbps=4365.8, copy_gbps=4207.5,
                           add_gbps=4365.8, buffer_bytes=1 << 30, measured_at="2026-11-30", torch="2.11")
    bandwidth.store_cached(ceiling)
    assert bandwidth.load_cached("NVIDIA H200", "580.159.04") == ceiling
    assert bandwidth.load_cached("NVIDIA H200", "590.00") is None  # a new driver measures again
    assert bandwidth.load_cached("NVIDIA H100", "580.159.04") is None
    other = bandwidth.Ceiling(**{**ceiling.__dict__, "gpu": "NVIDIA H100", "ceiling_gbps": 3000.0})
    bandwidth.store_cached(other)
    assert bandwidth.load_cached("NVIDIA H200", "580.159.04").ceiling_gbps == 4365.8


def test_corrupt_ceiling_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path))
    (tmp_path / "ceilings.json").write_text("{not json")
    assert bandwidth.load_cached("NVIDIA H200", "580") is None


def _guarded_out(n=10, dtype=torch.float32):
    return guards.guard_output("out", (n,), (1,), dtype, "cpu")


def test_output_guard_sees_writes_past_the_end_and_before_the_start():
    out = _guarded_out()
    out.view.fill_(1.0)
    assert out.outside_writes() == {}
    out.buffer[guards.GUARD + 10: guards.GUARD + 34] = 0.0  # 24 elements past the end
    out.buffer[guards.GUARD - 2] = 5.0
    assert out.outside_writes() == {"before": 1, "after": 24}


def test_strided_output_gaps_are_guarded():
    out = guards.guard_output("out", (3, 4), (8, 1), torch.float32, "cpu")
    out.view.fill_(2.0)
    assert out.outside_writes() == {}
    out.buffer[guards.GUARD + 5] = 0.0  # between row 0 and row 1
    assert out.outside_writes() == {"gaps": 1}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_poison_is_told_apart_from_a_computed_nan(dtype):
    out = _guarded_out(4, dtype)
    assert bool(guards.is_poison(out.view).all())
    out.view[1] = float("nan")
    out.view[2] = 3.0
    assert guards.is_poison(out.view).tolist() == [True, False, False, True]


def test_input_guards_hold_nan_and_keep_strides():
    x = torch.arange(12.0).reshape(3, 4)
    wide = torch.empty(3, 6)
    wide[:, :4] = x
    g = guards.guard_input("x", wide[:, :4])
    assert g.view.stride() == (6, 1)
    assert torch.equal(g.view, x)
    assert torch.isnan(g.buffer[guards.GUARD + 4]).item()  # a gap
    assert torch.isnan(g.buffer[-1]).item()


def test_unwritten_elements_are_named():
    out = _guarded_out(5)
    out.view[:3] = 1.0
    with pytest.raises(GradeFailure, match=r"left 2 of 5 elements of `out` unwritten: out\[3\]"):
        compare.expect_close(out.view, torch.ones(5, dtype=torch.float64))


def test_mismatches_list_first_indices_and_count_the_rest():
    expected = torch.arange(10, dtype=torch.float64)
    actual = expected.float().clone()
    actual[4:] += 1
    with pytest.raises(GradeFailure) as info:
        compare.expect_close(actual, expected, poisoned=False)
    message = str(info.value)
    assert message.startswith("6 of 10 elements of `out` differ")
    assert "out[4] = 5 but expected 4" in message and "and 3 more" in message


def test_all_zero_answer_cannot_pass_even_for_small_values():
    expected = torch.full((8,), 1e-6, dtype=torch.float64)
    with pytest.raises(GradeFailure):
        compare.expect_close(torch.zeros(8), expected, poisoned=False)


def test_fp16_rounding_passes_and_wrong_dtype_is_named():
    expected = torch.randn(100, dtype=torch.float64)
    compare.expect_close(expected.half(), expected, poisoned=False)
    with pytest.raises(GradeFailure, match="is float32 but should be float16"):
        compare.expect_close(expected.float(), expected, dtype=torch.float16, poisoned=False)


def test_exceptions_become_sentences():
    failure = describe_exception(NotImplementedError("exercise 1: write the kernel"), None)
    assert failure.kind == "not_implemented" and str(failure).startswith("not implemented yet")
    failure = describe_exception(RuntimeError("CUDA error: an illegal memory access was encountered"), None)
    assert failure.kind == "fatal" and "illegal memory access" in str(failure)
    assert "raised ValueError: bad" in str(describe_exception(ValueError("bad"), None))


def test_json_contract_spellings():
    run = RunResult(exercise=1, learner_file="x.py", seed=7, mode="interpreter")
    run.checks = [CheckResult("a::test_matches[n1]", "matches[n1]", True, launches=[1]),
                  CheckResult("a::test_performance", "performance", False, skipped=True,
                              message="performance: not measured (no GPU)", kind="wrong")]
    data = json.loads(json.dumps(report.to_json(run)))
    assert set(data) >= {"exercise", "passed", "mode", "checks", "performance"}
    assert data["exercise"] == 1 and data["passed"] is True and data["mode"] == "interpreter"
    assert data["performance"] is None and data["launches_per_call"] == 1
    assert data["checks"][0] == {"name": "matches[n1]", "passed": True, "message": "", "skipped": False, "kind": "ok"}


def test_a_not_run_check_fails_the_run():
    run = RunResult(exercise=1, learner_file="x.py", seed=7, mode="interpreter")
    run.checks = [CheckResult("a", "a", True), CheckResult("b", "b", False, skipped=True, kind="not_run")]
    assert not run.passed


def test_a_crash_costs_only_the_check_that_crashed():
    """Two checks, each segfaults: both are reported, so the child was restarted after the first."""
    from tests.grading import grade

    run = grade(1, catalogue.get(1).wrong_dir / "segfaults.py", select="matches_reference and (n2 or n3) and fp32")
    assert [c.kind for c in run.checks] == ["crash", "crash"]
    assert all("segmentation fault" in c.message for c in run.checks)
    assert run.fatal is None and not run.passed


def test_a_gpu_performance_check_gets_a_longer_clock_unless_one_is_given():
    """Compiling at the benchmark size and timing in turns with a peer took exercise 7's performance
    check about a minute on an H200: the correctness checks' clock would fail the course's solution."""
    from types import SimpleNamespace

    from grader.judge import plugin

    perf_id = "grader/exercises/ex07_flash_attention/spec.py::test_performance"
    check_id = "grader/exercises/ex07_flash_attention/spec.py::test_matches_reference[B1-H1-S1-D16]"
    gpu = SimpleNamespace(mode="gpu", timeout=plugin.CHECK_TIMEOUT["gpu"], timeout_given=False)
    assert plugin.check_clock(gpu, perf_id) == plugin.PERFORMANCE_TIMEOUT > plugin.CHECK_TIMEOUT["gpu"]
    assert plugin.check_clock(gpu, check_id) == plugin.CHECK_TIMEOUT["gpu"]
    given = SimpleNamespace(mode="gpu", timeout=20.0, timeout_given=True)
    assert plugin.check_clock(given, perf_id) == 20.0
    cpu = SimpleNamespace(mode="interpreter", timeout=plugin.CHECK_TIMEOUT["interpreter"], timeout_given=False)
    assert plugin.check_clock(cpu, perf_id) == plugin.CHECK_TIMEOUT["interpreter"]



def test_a_timeout_names_the_clock_that_ran_out():
    from grader.judge.learner_process import clock_that_ran_out, timeout_message

    assert clock_that_ran_out(120.0, 35.2, 60.0) == 60.0  # the check's deadline came first
    assert clock_that_ran_out(20.0, 50.0, 60.0) == 20.0  # the request's own limit came first
    assert clock_that_ran_out(None, 3.9, 4.0) == 4.0
    assert "did not finish within 60 s" in timeout_message(clock_that_ran_out(120.0, 35.2, 60.0), "performance")


# --- the judge's clock: how many calls a round holds ---------------------------------------------

GiB = 1 << 30


@pytest.mark.parametrize("fastest_ms, set_gib, free_gib, sets", [
    (0.062, 0.25, 130, 64),     # exercise 9's forward on an H200: 65 wanted, capped at MAX_SETS
    (0.116, 0.5, 130, 35),      # its 30720-row grading size: 4 ms / 0.116 ms
    (0.37, 1.5, 130, 11),       # exercise 1 at 2^27: long calls need few
    (2.0, 4.0, 130, 8),         # never fewer than SETS, the count the exercises size their inputs for
    (0.062, 0.25, 4, 8),        # a small card: 2 GiB of sets hold 8, and 8 stay
    (0.062, 0.25, 6, 12),       # half of 6 GiB holds 12 sets of 0.25 GiB
    (None, 0.25, 130, 8),       # no byte model (exercise 7 times FLOPs): SETS
])
def test_rounds_are_sized_to_outlast_their_fixed_cost(fastest_ms, set_gib, free_gib, sets):
    from grader.judge import clock

    assert clock.sets_for(fastest_ms, int(set_gib * GiB), int(free_gib * GiB)) == sets


def test_a_round_of_sized_sets_lasts_round_ms_at_the_ceiling():
    from grader.judge import clock

    k = clock.sets_for(0.2, 1 << 20, 100 * GiB)
    assert k * 0.2 >= clock.ROUND_MS > (k - 1) * 0.2


def test_a_set_counts_its_tensors_and_the_output_slot_beside_them():
    from grader.judge import clock

    x, y = torch.empty(1000), torch.empty(10, dtype=torch.float16)
    out = torch.empty(250)
    view = torch.empty(2000)[:100]  # a view holds its whole storage on the card
    assert clock.set_bytes([x, y, 3.0], {"z": view}, out) == 4000 + 20 + 8000 + 1000


def test_a_check_that_breaks_blames_the_grader_not_the_file():
    """An exception of the spec itself (here the one a machine without platformdirs raised) is the course's
    bug: the sentence says so and does not say "your code raised"."""
    from types import SimpleNamespace

    from grader.judge import plugin

    report = SimpleNamespace(failed=True)
    call = SimpleNamespace(excinfo=SimpleNamespace(value=ModuleNotFoundError("No module named 'platformdirs'")))
    item = SimpleNamespace(session=SimpleNamespace(shouldstop=False))
    hook = plugin.pytest_runtest_makereport(item, call)
    next(hook)
    try:
        hook.send(SimpleNamespace(get_result=lambda: report))
    except StopIteration:
        pass
    assert "your code" not in report.grade_message
    assert report.grade_message.startswith("the grader's check failed (ModuleNotFoundError: No module named")
    assert "not your file's" in report.grade_message


def test_a_card_that_cannot_measure_its_floor_reports_a_fraction_under_it_without_failing():
    note = "on this NVIDIA H200 the input sets its memory holds move in 0.8 ms at 4,814 GB/s"
    # Under the floor on such a card: reported, not decided, not failed.
    passed, sentence, decided = bandwidth.card_verdict(0.31, 0.7, note)
    assert passed and not decided
    assert sentence.startswith("31% of the ceiling against a floor of 70%: not decided on this card")
    # The same fraction on a card that measures honestly fails, as fraction_verdict says.
    assert bandwidth.card_verdict(0.31, 0.7, None) == (False, bandwidth.fraction_verdict(0.31, 0.7)[1], True)
    # Over the floor, the note changes nothing; above what memory delivers is an error on every card.
    assert bandwidth.card_verdict(0.9, 0.7, note) == (True, "90% of the ceiling (floor 70%)", True)
    passed, sentence, decided = bandwidth.card_verdict(1.3, 0.7, note)
    assert not passed and decided and "measurement error" in sentence


def _rendered(run: RunResult, number: int = 1) -> str:
    from rich.console import Console

    console = Console(record=True, width=200, highlight=False)
    report.render(run, catalogue.get(number), console)
    return console.export_text()


def test_a_sandbox_that_could_not_start_is_said_once_as_the_machines_problem():
    run = RunResult(exercise=1, learner_file="x.py", seed=7, mode="interpreter")
    run.checks = [CheckResult("a", "a", False, message="the grader could not set up its sandbox: the sandbox user "
                              "may not run /venv/bin/python", kind="setup"),
                  *(CheckResult(n, n, False, skipped=True, kind="not_run") for n in "bc")]
    said = _rendered(run)
    assert "could not start your code (a problem of this machine's setup, not of your file)" in said
    assert said.count("may not run /venv/bin/python") == 1 and "2 other checks were not run" in said


def test_a_weaker_sandbox_is_named_in_the_report_and_the_full_one_is_not():
    from grader.learner import sandbox

    run = RunResult(exercise=1, learner_file="x.py", seed=7, mode="interpreter")
    run.checks = [CheckResult("a", "a", True)]
    run.sandbox = sandbox.DESCRIPTIONS["partial"]
    assert "your code ran partly sandboxed" in _rendered(run)
    run.sandbox = sandbox.DESCRIPTIONS["namespaces"] + "; it runs as your user (uid 1000), in a user namespace"
    assert "your code ran" not in _rendered(run)


def test_an_unknown_sandbox_level_is_refused_before_anything_runs(monkeypatch, capsys):
    from grader.commands import cli

    monkeypatch.setenv("GRADE_SANDBOX", "namespace")  # a typo of "namespaces"
    assert cli.main(["list"]) == 2
    assert "GRADE_SANDBOX='namespace' names no sandbox level" in capsys.readouterr().err
    monkeypatch.setenv("GRADE_SANDBOX", "auto")
    from grader.learner import sandbox

    assert sandbox.setting_problem() is None


def test_a_report_suggests_grade_show_only_for_an_exercise_it_draws():
    from grader.commands import show

    drawn = show.drawn_exercises()
    undrawn = [e.number for e in catalogue.EXERCISES if e.number not in drawn]
    assert 1 in drawn and undrawn, (drawn, undrawn)
    for number, expected in ((drawn[0], f"grade show {drawn[0]}"), (undrawn[-1], None)):
        run = RunResult(exercise=number, learner_file="elsewhere/mine.py", seed=7, mode="interpreter")
        run.checks = [CheckResult("a", "a", False, message="your kernel wrote past the end", kind="masking")]
        command = report.show_command(run)
        if expected is None:  # `grade show` would refuse it: no command is suggested
            assert command is None, (number, command)
        else:
            assert command is not None and command.startswith(expected), (number, command)


def test_a_cast_after_the_kernel_is_named_as_the_returned_dtype():
    from types import SimpleNamespace

    from grader.judge import checks

    x = SimpleNamespace(name="x", role="input", view=torch.zeros(4, dtype=torch.float16))
    outcome = SimpleNamespace(launches=[object()], computed=[".to() / .float() (a full copy)"],
                              result=torch.zeros(4, dtype=torch.float32))
    with pytest.raises(GradeFailure, match="returned float32 for float16 inputs.*in the inputs' dtype, float16"):
        checks.check_outcome(outcome, [x])
    outcome.computed = ["torch.add"]  # torch computing the answer is still named as such
    with pytest.raises(GradeFailure, match=r"computed with torch \(torch.add\)"):
        checks.check_outcome(outcome, [x])
