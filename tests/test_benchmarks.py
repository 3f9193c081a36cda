"""The benchmark modules' logic, without a GPU: timing in turns, and exercise 7's two benchmarks run end
to end in Triton's interpreter on tiny shapes with a stand-in clock (the numbers are meaningless; the
rows, the ratios and the wrong-result path are what is checked)."""

import itertools
import json

import pytest
import torch

from grader import benchmarks, mode, perf


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
    mode.fix_interpreter_loop_bounds()
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


@pytest.fixture
def rmsnorm_bench(interpreter_stand_ins, monkeypatch):
    """Exercise 9's benchmark on the CPU: tiny shapes, eager in place of torch.compile, a round ceiling."""
    from grader.benchmarks import ex09_rmsnorm as bench

    monkeypatch.setattr(bench, "DEVICE", "cpu")
    monkeypatch.setattr(bench, "ceiling_gbps", lambda: 0.001)  # tiny shapes: fractions of order 1
    monkeypatch.setattr(bench, "_compiled", bench._eager)
    return bench


def test_rmsnorm_benchmark_peer_rows(rmsnorm_bench):
    bench = rmsnorm_bench
    rows = bench.peer_rows(9, 33, torch.float32, None, "liger_kernel could not be imported: (stand-in)", rounds=2)
    timed = [r for r in rows if r.get("ms") is not None]
    # solution, eager and (eager standing in for) compile, each op; Liger says why it is missing.
    assert {(r["op"], r["kernel"]) for r in timed} == {(op, k) for op in ("fwd", "bwd", "fwdbwd")
                                                      for k in ("solution", "eager", "compile")}
    assert [r["error"] for r in rows if r["kernel"] == "liger"] == ["liger_kernel could not be imported: (stand-in)"] * 3
    forward_bytes = (2 * 9 * 33 + 33) * 4 + 4 * 9
    backward_bytes = (3 * 9 * 33 + 2 * 33) * 4 + 4 * 9
    for r in timed:
        assert r["bytes"] == {"fwd": forward_bytes, "bwd": backward_bytes, "fwdbwd": forward_bytes + backward_bytes}[r["op"]]
        assert len(r["ms_runs"]) == 2 and r["ms"] == 1.5  # the fake clock alternates 1 and 2 ms
        assert r["fraction"] == pytest.approx(r["bytes"] / 1.5e-3 / 1e9 / 0.001, rel=1e-3)
        # Checked before timed: every contender within float32 rounding of the float64 reference.
        assert max(r["max_rel_err"].values()) < 1e-5


def test_rmsnorm_benchmark_sweeps_mark_the_default(rmsnorm_bench, monkeypatch):
    bench = rmsnorm_bench
    monkeypatch.setattr(bench, "FWD_WARPS", (1, 4))
    monkeypatch.setattr(bench, "BWD_WARPS", (4,))
    monkeypatch.setattr(bench, "BWD_PER_SM", (1, 4))
    forward = bench.fwd_sweep_rows(ns=(40,), m=6, dtype=torch.float32)
    assert [r["num_warps"] for r in forward] == [1, 4] and [r["default"] for r in forward] == [True, False]
    backward = bench.bwd_sweep_rows(ns=(40,), m=37, dtype=torch.float32)
    # 4 stand-in SMs: 1 program per SM -> 10 rows each, 4 programs; 4 per SM -> 3 rows each, 13 programs;
    # then the solution's configuration with the weights loaded in every iteration.
    assert [(r["kernel"], r["programs_per_sm"], r["n_partials"], r["default"]) for r in backward] == [
        ("warps4-per_sm1", 1, 4, False), ("warps4-per_sm4", 4, 13, True), ("w per row", 4, 13, False)]


def test_rmsnorm_benchmark_step_and_amdahl(rmsnorm_bench, monkeypatch):
    bench = rmsnorm_bench
    norm_share = [{"name": "aten::_fused_rms_norm", "calls": 8.0, "device_time_us": 30.0},
                  {"name": "aten::addmm", "calls": 24.0, "device_time_us": 70.0}]
    monkeypatch.setattr(bench, "training_profile", lambda fn, iterations: (fn(), norm_share)[1])
    config = {"blocks": 1, "d_model": 16, "n_heads": 2, "mlp_ratio": 2, "batch": 2, "seq": 3}
    rows = bench.step_rows(config)
    summary = next(r for r in rows if r["part"] == "amdahl")
    assert summary["norm_fraction_profile"] == 0.3
    s = summary["local_speedup"]
    assert summary["predicted_speedup_profile"] == pytest.approx(1 / (0.7 + 0.3 / s), rel=1e-4)
    assert summary["measured_speedup"] == pytest.approx(summary["step_ms_eager"] / summary["step_ms_solution"])
    # The same weights and inputs through both norms: the gradients agree to bf16 rounding.
    assert summary["gradient_max_rel_diff"] < 3e-2
    assert {r["kernel"] for r in rows if r["part"] == "step"} == {"eager", "solution"}


def test_rmsnorm_benchmark_writes_after_each_part_and_keeps_going(rmsnorm_bench, monkeypatch, tmp_path):
    bench = rmsnorm_bench
    sweep = bench.fwd_sweep_rows
    monkeypatch.setattr(bench, "FWD_WARPS", (2,))
    monkeypatch.setattr(bench, "fwd_sweep_rows", lambda: sweep(ns=(40,), m=5, dtype=torch.float32))

    def broken():
        raise RuntimeError("out of memory (stand-in)")

    monkeypatch.setattr(bench, "bwd_sweep_rows", broken)
    results = bench.Results(tmp_path / "h200-ex09-rmsnorm.json", {"gpu": "stand-in"})
    bench.run_parts(results, ("fwd-sweep", "bwd-sweep"))
    written = json.loads((tmp_path / "h200-ex09-rmsnorm.json").read_text())
    parts = [r["part"] for r in written["rows"]]
    assert parts == ["bwd-sweep", "fwd-sweep"]  # the broken part is a row with its error; nothing is lost
    assert written["rows"][0]["error"] == "RuntimeError: out of memory (stand-in)"
    assert set(written["meta"]["seconds_by_part"]) == {"fwd-sweep", "bwd-sweep"}
    assert "fwd-sweep N=40: best warps2" in bench.table(written["rows"])
