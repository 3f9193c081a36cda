"""The benchmark modules' logic, without a GPU: timing in turns, and exercise 7's two benchmarks run end
to end in Triton's interpreter on tiny shapes with a stand-in clock (the numbers are meaningless; the
rows, the ratios and the wrong-result path are what is checked)."""

import itertools

import pytest
import torch

from grader import benchmarks, interpreter_fixes, perf


def test_time_rows_in_turns_alternates_and_reports_medians(monkeypatch):
    calls = []
    scripted = {"a": iter([3.0, 1.0, 2.0]), "b": iter([10.0, 30.0, 20.0])}

    def fake_time_ms(fn, **_):
        name = fn()
        calls.append(name)
        return next(scripted[name])

    monkeypatch.setattr(perf, "time_ms", fake_time_ms)
    rows = benchmarks.time_rows_in_turns({"a": lambda: "a", "b": lambda: "b"}, flops=2e12, rounds=3, S=7)
    assert calls == ["a", "b", "a", "b", "a", "b"]  # in turns, not all of a then all of b
    assert rows["a"]["ms"] == 2.0 and rows["a"]["ms_runs"] == [3.0, 1.0, 2.0]  # the median, every round kept
    assert rows["b"]["ms"] == 20.0
    assert rows["a"]["tflops"] == 1000.0  # 2e12 FLOP in 2 ms
    assert rows["a"]["S"] == 7 and rows["a"]["kernel"] == "a"


@pytest.fixture
def interpreter_stand_ins(monkeypatch):
    """CPU tensors instead of CUDA ones and a clock that runs the kernel once and says 1 ms."""
    if torch.cuda.is_available():
        pytest.skip("this test stands in for the GPU; on a GPU run the benchmarks themselves")
    interpreter_fixes.apply()
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    ticks = itertools.count()
    monkeypatch.setattr(perf, "time_ms", lambda fn, **_: (fn(), 1.0 + next(ticks) % 2)[1])


def test_flash_attention_benchmark_rows(interpreter_stand_ins, monkeypatch):
    from grader.benchmarks import ex07_flash_attention as bench

    monkeypatch.setattr(bench, "SHAPES", [(1, 2, 70, 32, torch.float16)])  # 70: the masked tail runs
    monkeypatch.setattr(bench, "SWEEP", {32: [(64, 32, 4, 1)]})
    monkeypatch.setattr(bench, "SWEEP_SHAPES", {32: (1, 2, 70)})
    rows = bench.run()
    solution = [r for r in rows if r["kernel"] == "solution"]
    assert [r["causal"] for r in solution] == [False, True]
    for r in solution:
        assert len(r["ms_runs"]) == 3 and r["rel_diff_vs_sdpa"] < 1e-2
        sdpa = next(s for s in rows if s["kernel"] == "sdpa" and s["causal"] == r["causal"])
        assert r["ratio_to_sdpa"] == pytest.approx(sdpa["ms"] / r["ms"], rel=1e-3)
    assert sum(r["kernel"] == "best config" for r in rows) == 2


def test_attention_variants_benchmark_flags_a_wrong_kernel_instead_of_timing_it(interpreter_stand_ins,
                                                                                monkeypatch):
    import triton

    from grader.benchmarks import ex07_attention_variants as variants

    monkeypatch.setattr(variants, "SHAPE", (1, 2, 64, 32))
    monkeypatch.setattr(variants, "VARIANTS", {"tma": ((32, 16, 4, 1), dict(tma=True))})
    monkeypatch.setattr(variants, "WS_VARIANTS", {"warp-specialized": {}, "broken": {"ZERO_GUARD": True}})
    monkeypatch.setattr(variants, "WS_CONFIG", (32, 16, 4, 1))
    real_run_ws = variants.run_ws

    def run_ws(q, k, v, **switches):  # stand in for the miscompiled kernel: right launch, wrong answer
        out = real_run_ws(q, k, v, **switches)
        return out + 1 if switches else out

    monkeypatch.setattr(variants, "run_ws", run_ws)
    set_allocator = triton.set_allocator
    monkeypatch.setattr(variants.triton, "set_allocator",
                        lambda _: set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8)))
    monkeypatch.setattr(variants.time, "sleep", lambda _: None)
    rows = variants.run()
    by_name = {(r["kernel"], r.get("causal")): r for r in rows}
    for key in [("solution", False), ("tma", False), ("warp-specialized", False), ("solution", True), ("tma", True)]:
        assert by_name[key]["max_abs_error"] < 1e-2 and "ratio_to_sdpa" in by_name[key], key
    assert by_name[("broken", False)]["wrong"] and by_name[("broken", False)]["ms"] is None
    assert ("warp-specialized", True) not in by_name  # no causal form of the warp-specialized kernel
    assert sum(r["kernel"].startswith("drift") for r in rows) == 30
