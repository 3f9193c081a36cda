"""`grade show N`: the map of every exercise 1 wrong variant shows the mistake it is named for
(asserted on the map's data, not on pixels); the command's usage errors and failures; and the
failure kinds that make a grading report end with the `grade show` command."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
import torch
from rich.console import Console

from grader import catalogue
from grader.commands import cli, report, show
from grader.judge import checks
from grader.wire.failures import ACCESS_KINDS, GradeFailure
from grader.wire.results import CheckRecord as CheckResult, RunResult

ROOT = catalogue.ROOT
WRONG_EX01 = sorted((catalogue.get(1).wrong_dir).glob("*.py"))
N = 1500  # exercise 1's show input; the variants' BLOCK_SIZE is 1024: programs 0 and 1, 548 lanes past n


def after(amap, name, kind):
    return amap.outside_elements(name, kind)["after"]


def counts(amap, name, kind):
    return amap.element_counts(name, kind)


#: What each variant's map must show: one assertion per file in grader/exercises/ex01_vector_add/wrong (a new variant
#: without an entry fails test_every_variant_has_an_expectation).
EXPECTATIONS = {
    # Its mistake is arithmetic, not where it reads or writes: the map is the solution's.
    "adds_in_bf16": lambda r: ((counts(r.map, "out", "stores") == 1).all() and (counts(r.map, "x", "loads") == 1).all()),
    "answer_from_torch": lambda r: (not counts(r.map, "x", "loads").any() and not counts(r.map, "y", "loads").any()
                                    and any("torch computed" in note for note in r.map.notes)),
    "grid_one_block_short": lambda r: (r.map.launches[0]["grid"] == [1, 1, 1]
                                       and (counts(r.map, "out", "stores")[:1024] == 1).all()
                                       and not counts(r.map, "out", "stores")[1024:].any()),
    "kernel_hangs": lambda r: r.map is None and "did not finish within" in r.problem,
    "kernel_raises": lambda r: "NameError" in r.map.error and not counts(r.map, "out", "stores").any(),
    "mask_off_by_one": lambda r: (after(r.map, "out", "stores") == 1 and after(r.map, "x", "loads") == 1
                                  and after(r.map, "y", "loads") == 1),
    "no_kernel": lambda r: r.map.launches == [] and any("torch computed" in note for note in r.map.notes),
    "no_tail_mask": lambda r: (after(r.map, "out", "stores") == 2048 - N and after(r.map, "x", "loads") == 2048 - N
                               and (counts(r.map, "out", "stores") == 1).all()),
    # Programs 0 and 1 both start near element 0: out[1..1023] is stored twice, nothing past out[1024].
    "offsets_without_block": lambda r: (counts(r.map, "out", "stores")[[0, 1024]].tolist() == [1, 1]
                                        and (counts(r.map, "out", "stores")[1:1024] == 2).all()
                                        and not counts(r.map, "out", "stores")[1025:].any()),
    "reads_past_end": lambda r: (after(r.map, "x", "loads") == 2049 - N and after(r.map, "y", "loads") == 0
                                 and after(r.map, "out", "stores") == 0),
    "reads_x_twice": lambda r: ((counts(r.map, "x", "loads") == 2).all() and (counts(r.map, "y", "loads") == 1).all()),
    "segfaults": lambda r: r.map is None and "segmentation fault" in r.problem,
    "zeros_like_output": lambda r: (any("filled the output" in note for note in r.map.notes)
                                    and (counts(r.map, "out", "stores") == 1).all()),
}


def test_every_variant_has_an_expectation():
    assert sorted(p.stem for p in WRONG_EX01) == sorted(EXPECTATIONS)


@pytest.mark.parametrize("path", WRONG_EX01, ids=[p.stem for p in WRONG_EX01])
def test_show_draws_the_mistake_each_ex01_variant_is_named_for(path):
    timeout = 15 if path.stem == "kernel_hangs" else None
    result = show.record_in_child(catalogue.get(1), path, timeout=timeout)
    assert result.usage is None
    assert EXPECTATIONS[path.stem](result), (result.problem, result.map and [f.text for f in result.map.findings()])


def test_the_solution_map_is_clean():
    result = show.record_in_child(catalogue.get(1), ROOT / "solutions" / "ex01_vector_add.py")
    amap = result.map
    assert amap.launches == [{"kernel": "add_kernel", "grid": [2, 1, 1]}]
    assert (counts(amap, "out", "stores") == 1).all() and (counts(amap, "x", "loads") == 1).all()
    assert all(f.severity == "ok" for f in amap.findings())
    assert amap.element_programs("out", "stores").tolist() == [i // 1024 for i in range(N)]


# --- the command ------------------------------------------------------------------------------


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, " ".join(err.split())


def test_show_prints_json_and_writes_a_figure(capsys, tmp_path):
    variant = catalogue.get(1).wrong_dir / "no_tail_mask.py"
    figure = tmp_path / "map.svg"
    code, out, _ = run(capsys, "show", "1", "--from", str(variant), "--size", "1000", "--json", "--out", str(figure))
    assert code == 0
    data = json.loads(out)
    assert data["exercise"] == 1
    from grader.learner.access_map import AccessMap

    amap = AccessMap.from_dict(data["map"])
    assert amap.tensor("x").shape == (1000,)
    assert amap.outside_elements("out", "stores")["after"] == 24  # one program of 1024 lanes over 1000
    assert figure.is_file() and "past the end of `out`" in figure.read_text()


@pytest.mark.parametrize("argv,words", [
    (["show", "6"], "there is no access map for exercise 6"),
    (["show", "1", "--out", "map.pdf"], "--out takes a .png or .svg file"),
    (["show", "1", "--size", "0", "--from", "solutions/ex01_vector_add.py"], "--size takes N"),
    (["show", "1", "--from", "no/such/file.py"], "no file at no/such/file.py"),
], ids=["no-tensors", "bad-format", "bad-size", "missing-file"])
def test_usage_errors_exit_2(capsys, argv, words):
    code, _, err = run(capsys, *argv)
    assert code == 2 and words in err


def test_a_crash_is_a_sentence_and_exit_1(capsys):
    code, out, _ = run(capsys, "show", "1", "--from", str(catalogue.get(1).wrong_dir / "segfaults.py"))
    assert code == 1
    assert "No map: the process drawing the map died with a segmentation fault" in " ".join(out.split())


def test_command_line(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert show.command(3) == "grade show 3"
    variant = catalogue.get(3).wrong_dir / "no_other_inf.py"
    assert show.command(3, variant) == "grade show 3 --from grader/exercises/ex03_softmax/wrong/no_other_inf.py"
    assert show.command(3, tmp_path / "mine.py") == f"grade show 3 --from {tmp_path / 'mine.py'}"


# --- failure kinds ----------------------------------------------------------------------------

import triton  # noqa: E402  (after grader: the tests' conftest has set TRITON_INTERPRET)
import triton.language as tl  # noqa: E402


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, MASK_STORE: tl.constexpr, SHIFT: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    if SHIFT:
        x = x + 0.0 * tl.load(x_ptr + offsets + 1)  # reads one element past the end of x
    y = tl.load(y_ptr + offsets, mask=mask)
    if MASK_STORE:
        tl.store(out_ptr + offsets, x + y, mask=mask)
    else:
        tl.store(out_ptr + offsets, x + y)


def _add(mask_store=True, shift=False, programs=None):
    def add(x, y):
        out = torch.empty_like(x)
        n = out.numel()
        _add_kernel[(programs or triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128, MASK_STORE=mask_store, SHIFT=shift)
        return out
    return add


@pytest.mark.parametrize("fn,kind,words", [
    (_add(mask_store=False), "masking", "wrote 84 elements past the end of `out`"),
    (_add(programs=2), "coverage", "left 44 of 300 elements of `out` unwritten"),
    (_add(shift=True), "masking", "read past the end of `x`"),
], ids=["store-past-the-end", "grid-short", "read-past-the-end"])
def test_access_failures_have_a_kind(fn, kind, words):
    x, y = torch.randn(300), torch.randn(300)
    with pytest.raises(GradeFailure) as caught:
        checks.run_case(fn, {"x": x, "y": y}, x.double() + y.double(), dtype=torch.float32)
    assert caught.value.kind == kind and words in str(caught.value)
    assert kind in ACCESS_KINDS


def test_a_wrong_value_is_not_an_access_failure():
    x, y = torch.randn(300), torch.randn(300)
    with pytest.raises(GradeFailure) as caught:
        checks.run_case(_add(), {"x": x, "y": y}, x.double() - y.double(), dtype=torch.float32)
    assert caught.value.kind == "wrong"


def test_the_row_stride_diagnosis_keeps_the_masking_kind():
    from grader.exercises._shared import softmax_checks

    @triton.jit
    def rows_kernel(x_ptr, out_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * row_stride + cols, e / tl.sum(e, axis=0), mask=mask)  # x's stride for out

    def softmax(x):
        out = torch.empty_like(x)
        rows_kernel[(x.shape[0],)](x, out, x.stride(0), x.shape[1], BLOCK=128)
        return out

    with pytest.raises(GradeFailure) as caught:
        softmax_checks.check_strided(softmax, torch.randn(3, 100), 130)
    assert caught.value.kind == "masking" and "ignores the row stride of `out`" in str(caught.value)


def _run_with(kind: str, learner_file: str) -> RunResult:
    run = RunResult(exercise=1, learner_file=learner_file, seed=7, mode="interpreter")
    run.checks = [CheckResult("a::test_matches[n3]", "matches[n3]", True),
                  CheckResult("a::test_matches[n1025]", "matches[n1025]", False, message="a sentence", kind=kind)]
    return run


def _rendered(run: RunResult) -> list[str]:
    buffer = StringIO()
    report.render(run, catalogue.get(1), Console(file=buffer, width=80, color_system=None))
    return [line for line in buffer.getvalue().splitlines() if line.strip()]


def test_a_masking_failure_ends_the_report_with_the_show_command(tmp_path):
    variant = str(catalogue.get(1).wrong_dir / "no_tail_mask.py")
    run = _run_with("masking", variant)
    last = _rendered(run)[-1]
    assert last.endswith(show.command(1, variant)) and "grade show 1 --from " in last
    assert report.to_json(run)["show_command"] == show.command(1, variant)
    own = _run_with("coverage", str(catalogue.get(1).learner_path))
    assert _rendered(own)[-1].endswith("grade show 1")
    wrong = _run_with("wrong", variant)
    assert "grade show" not in "\n".join(_rendered(wrong))
    assert report.to_json(wrong)["show_command"] is None


def test_graded_variant_names_the_command():
    """End to end: a real grading run of a masking mistake reports its kind and the command."""
    from tests.grading import grade

    run = grade(1, catalogue.get(1).wrong_dir / "mask_off_by_one.py", select="matches_reference and n1025 and fp32")
    assert [c.kind for c in run.checks] == ["masking"]
    assert report.to_json(run)["show_command"].startswith("grade show 1 --from ")
