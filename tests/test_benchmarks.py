"""The benchmark modules' logic, without a GPU: timing in turns, and exercise 7's two benchmarks run end
to end in Triton's interpreter on tiny shapes with a stand-in clock (the numbers are meaningless; the
rows, the ratios and the wrong-result path are what is checked)."""

import itertools
import json

import pytest
import torch

from grader import bandwidth
from grader.learner import interpreter_fixes
from tools import benchmarks


def test_time_rows_in_turns_alternates_and_reports_medians(monkeypatch):
    calls = []
    scripted = {"a": iter([3.0, 1.0, 2.0]), "b": iter([10.0, 30.0, 20.0])}

    def fake_time_ms(fn, **_):
        name = fn()
        calls.append(name)
        return next(scripted[name])

    monkeypatch.setattr(bandwidth, "time_ms", fake_time_ms)
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
    monkeypatch.setattr(bandwidth, "time_ms", lambda fn, **_: (fn(), 1.0 + next(ticks) % 2)[1])


def test_flash_attention_benchmark_rows(interpreter_stand_ins, monkeypatch):
    from tools.benchmarks import ex07_flash_attention as bench

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

    from tools.benchmarks import ex07_attention_variants as variants

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


# --- exercise 3's sweep and what it reads from torch.compile ---------------------------------------

#: Generated code in the two spellings Inductor has used (R0_BLOCK/r0_offset, RBLOCK/roffset), cut
#: down to the lines `reduction_blocks` reads.
PERSISTENT_KERNEL = '''
@triton_heuristics.persistent_reduction(
    size_hints={'x': 4096, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
)
@triton.jit
def triton_per_fused__softmax_0(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 4096
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), None)
    tl.store(out_ptr2 + (r0_1 + 1024*x0), tmp9, None)
'''
LOOPED_KERNEL = '''
@triton_heuristics.reduction(
    size_hints=[4096, 8192],
    reduction_hint=ReductionHint.DEFAULT,
    filename=__file__,
)
@triton.jit
def triton_red_fused__softmax_0(in_ptr0, out_ptr2, ks0, xnumel, rnumel, XBLOCK : tl.constexpr, RBLOCK : tl.constexpr):
    for roffset in range(0, rnumel, RBLOCK):
        tmp0 = tl.load(in_ptr0 + (r1 + ks0*x0), rmask & xmask, eviction_policy='evict_last', other=0.0)
    for roffset in range(0, rnumel, RBLOCK):
        tmp1 = tl.load(in_ptr0 + (r1 + ks0*x0), rmask & xmask, eviction_policy='evict_last', other=0.0)
    for roffset in range(0, rnumel, RBLOCK):
        tmp2 = tl.load(in_ptr0 + (r1 + ks0*x0), rmask & xmask, eviction_policy='evict_first', other=0.0)
        tl.store(out_ptr2 + (r1 + ks0*x0), tmp3, rmask & xmask)
'''


def test_reduction_blocks_tells_a_persistent_kernel_from_a_looped_one():
    from tools.benchmarks.inductor_capture import reduction_blocks

    persistent = reduction_blocks(PERSISTENT_KERNEL)
    assert persistent["kind"] == "persistent" and persistent["r_block"] == 1024
    assert not persistent["r_block_autotuned"] and persistent["loops_over_row"] == 0
    assert (persistent["static_xnumel"], persistent["static_rnumel"]) == (4096, 1024)
    assert persistent["reduction_hint"] == "INNER" and persistent["size_hints"] == "{'x': 4096, 'r0_': 1024}"
    looped = reduction_blocks(LOOPED_KERNEL)
    assert looped["kind"] == "looped" and looped["r_block"] is None and looped["r_block_autotuned"]
    assert looped["loops_over_row"] == 3 and looped["loads"] == 3 and looped["stores"] == 1
    assert looped["static_rnumel"] is None and not looped["online_softmax"]
    online = reduction_blocks(LOOPED_KERNEL.replace("tmp1 = tl.load", "tmp1 = triton_helpers.online_softmax_combine("))
    assert online["online_softmax"]


def test_triton_kernels_and_the_call_come_out_of_a_wrapper_module():
    from tools.benchmarks.inductor_capture import call_function, launch_order, triton_kernels

    wrapper = ("import triton\n\ntriton_per_fused__softmax_0 = async_compile.triton('triton_per_fused__softmax_0', '''"
               + PERSISTENT_KERNEL + "''', device_str='cuda')\n\nasync_compile.wait(globals())\n\n"
               "def call(args):\n    arg0_1, = args\n    triton_per_fused__softmax_0.run(arg0_1, buf2, 4096, 1024, "
               "stream=stream0)\n    return (buf2, )\n\n\ndef benchmark_compiled_module():\n    pass\n")
    kernels = triton_kernels(wrapper)
    assert list(kernels) == ["triton_per_fused__softmax_0"] and "R0_BLOCK: tl.constexpr = 1024" in kernels[
        "triton_per_fused__softmax_0"]
    call = call_function(wrapper)
    assert call.startswith("def call(args):") and ".run(arg0_1" in call and "benchmark" not in call
    assert launch_order(call) == ["triton_per_fused__softmax_0"]
    assert list(triton_kernels(LOOPED_KERNEL)) == ["triton_red_fused__softmax_0"]  # a kernel module on its own
    method = ("class Runner:\n    def __init__(self):\n        pass\n\n    def call(self, args):\n        x, = args\n"
              "        k.run(x, stream=s)\n        return (x, )\n\nrunner = Runner()\ncall = runner.call\n")
    assert call_function(method) == "def call(self, args):\n    x, = args\n    k.run(x, stream=s)\n    return (x, )\n"


def test_the_main_kernel_is_the_last_one_launched():
    from tools.benchmarks.ex03_softmax import main_kernel
    from tools.benchmarks.inductor_capture import reduction_blocks

    kernels = [{"name": "k_per", **reduction_blocks(PERSISTENT_KERNEL)},
               {"name": "k_red", **reduction_blocks(LOOPED_KERNEL),
                "autotuned": {"kwargs": {"XBLOCK": 1, "RBLOCK": 2048}, "num_warps": 16}}]
    main = main_kernel(kernels, ["k_per", "k_red"])
    assert main == {"kernels_generated": 2, "reduction": "looped", "r_block": 2048, "r_block_autotuned": True,
                    "x_block": 1, "num_warps": 16, "loops_over_row": 3, "online_softmax": False, "sizes": "symbolic"}
    assert main_kernel(kernels, ["k_red", "k_per"])["r_block"] == 1024


def test_kernels_from_a_profiler_trace():
    from tools.benchmarks.inductor_capture import kernels_from_trace

    trace = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "b", "ts": 20, "dur": 11.5,
         "args": {"grid": [4096, 1, 1], "block": [32, 1, 1], "registers per thread": 40, "shared memory": 0}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 5, "dur": 3.0, "args": {}},
        {"ph": "X", "cat": "Kernel", "name": "a", "ts": 10, "dur": 2.0, "args": {"grid": [1, 1, 1]}},
    ]}
    kernels = kernels_from_trace(trace)
    assert [k["name"] for k in kernels] == ["a", "b"]
    assert kernels[1] == {"name": "b", "us": 11.5, "grid": [4096, 1, 1], "block": [32, 1, 1], "registers": 40,
                          "shared_bytes": 0}


def test_fresh_function_has_its_own_code_object():
    from tools.benchmarks.inductor_capture import fresh_function
    from tools.benchmarks.softmax_sweep import eager_softmax

    a, b = fresh_function(eager_softmax, "a"), fresh_function(eager_softmax, "b")
    assert a.__code__ is not b.__code__ and a.__code__ is not eager_softmax.__code__
    assert a.__code__.co_name == "a"
    x = torch.randn(3, 5)
    assert torch.equal(a(x), eager_softmax(x))


def test_cpu_clock_reads_a_fraction():
    from tools.benchmarks.inductor_capture import CpuClock, descendants

    clock = CpuClock()
    sum(range(200_000))
    busy = clock.busy()
    assert busy is None or 0.0 <= busy <= 1.0
    assert isinstance(descendants(), list)


def test_softmax_benchmark_rows(interpreter_stand_ins, monkeypatch):
    """Exercise 3's sweep end to end in the interpreter, without torch.compile and the profiler: the
    rows, the variants, the wrong-answer path, and the summary's targets."""
    from tools.benchmarks import ex03_softmax as bench

    monkeypatch.setattr(bench, "DEVICE", "cpu")
    monkeypatch.setattr(bench, "M", 5)
    monkeypatch.setattr(bench, "N_SWEEP", {"fp32": (96, 33), "bf16": (96,)})
    monkeypatch.setattr(bench, "M_SWEEP", (3,))
    monkeypatch.setattr(bench, "M_SWEEP_N", 40)
    monkeypatch.setattr(bench, "ROW_BLOCKS", {96: ((2, 1),)})
    monkeypatch.setattr(bench, "STREAMING_AT", (96,))
    monkeypatch.setattr(benchmarks, "ceiling_gbps", lambda: 1.0)
    real_with_warps = bench.with_warps

    def with_warps(num_warps):  # stand in for a miscompiled variant: right launch, wrong answer
        run = real_with_warps(num_warps)
        return (lambda x: run(x) * 2) if num_warps == 2 else run

    monkeypatch.setattr(bench, "with_warps", with_warps)
    # A CUDA graph needs a GPU: here a "replay" is the call itself, so the graph rows' plumbing runs.
    monkeypatch.setattr(bench.bandwidth, "graphed", lambda fn: fn)
    record = bench.Sweep(with_compile=False, diagnostics=False, graphs=True).run()
    rows = {(r["kernel"], r["M"], r["N"], r["dtype"]): r for r in record["rows"]}
    assert {k[0] for k in rows} == {"naive", "torch", "solution", "persistent", "online", "variant_warps2",
                                    "variant_rows2_warps1", "variant_streaming", "variant_graph_solution",
                                    "variant_graph_torch"}
    # Replays only at M = 4096's stand-in (5 rows), for the peers that ran (no torch.compile here).
    assert {k[1] for k in rows if k[0].startswith("variant_graph")} == {5}
    assert rows[("variant_graph_solution", 5, 96, "bf16")]["bytes"] == 2 * 5 * 96 * 2
    solution = rows[("solution", 5, 96, "fp32")]
    assert solution["bytes"] == 2 * 5 * 96 * 4 and len(solution["ms_runs"]) == 2 and solution["num_warps"] == 1
    assert rows[("solution", 5, 96, "bf16")]["bytes"] == 2 * 5 * 96 * 2
    assert rows[("variant_warps2", 5, 96, "fp32")]["ms"] is None
    assert "wrong answer" in rows[("variant_warps2", 5, 96, "fp32")]["error"]
    assert rows[("variant_rows2_warps1", 5, 96, "bf16")]["rows_per_program"] == 2
    assert ("online", 5, 96, "bf16") not in rows and ("solution", 3, 40, "fp32") in rows
    assert ("variant_warps2", 3, 40, "fp32") not in rows  # variants at M = 4096 (here 5) only
    text = bench.summary({"meta": {"gpu": "test"}, **record})
    assert "[MISSED] fp32 N=32768" in text  # no such row here


def test_softmax_summary_checks_the_targets():
    from tools.benchmarks import ex03_softmax as bench

    def row(kernel, n, fraction, dtype="fp32"):
        return {"kernel": kernel, "M": 4096, "N": n, "dtype": dtype, "fraction": fraction}

    rows = [row("solution", 32768, 0.93), row("torch", 32768, 0.6), row("compile", 32768, 0.68),
            row("solution", 1024, 0.64), row("torch", 1024, 0.55), row("compile", 1024, 0.656),
            row("solution", 4096, 0.85), row("variant_compile_dynamic", 4096, 0.86),
            row("variant_warps2", 4096, 0.87)]
    text = bench.summary({"meta": {"gpu": "H"}, "rows": rows, "notes": {"rounds": 2}})
    assert "[ok] fp32 N=32768: solution 93.0%" in text
    assert "[ok] fp32: solution ahead of torch.softmax" in text
    # 0.64 * 1.03 = 0.659 >= 0.656: within 3% at 1024; behind dynamic=True at 4096.
    assert "[MISSED] fp32: ahead of every torch.compile mode from N=4096, within 3% below; not at 4096 " \
           "(variant_compile_dynamic)" in text
    assert "variant_warps2 87.0" in text
@pytest.fixture
def rmsnorm_bench(interpreter_stand_ins, monkeypatch):
    """Exercise 9's benchmark on the CPU: tiny shapes, eager in place of torch.compile, a round ceiling."""
    from tools.benchmarks import ex09_rmsnorm as bench

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
    # Rows per program: one row (the solution's choice at N = 40, so the default), then 2 and 4 rows on 4
    # and 8 warps, each checked against the reference before it is timed; m = 7 leaves a ragged last program.
    rows = bench.fwd_rows_rows(ns=(40,), m=7, dtype=torch.float32)
    assert [(r["rows_per_program"], r["num_warps"], r["default"]) for r in rows] == [
        (1, 1, True), (2, 4, False), (2, 8, False), (4, 4, False), (4, 8, False)]
    assert not any(r.get("error") for r in rows)
    backward = bench.bwd_sweep_rows(ns=(40,), m=37, dtype=torch.float32)
    # 4 stand-in SMs: 1 program per SM -> 10 rows each, 4 programs; 4 per SM -> 3 rows each, 13 programs;
    # then the solution's configuration with the weights loaded once per program, kept in registers.
    assert [(r["kernel"], r["programs_per_sm"], r["n_partials"], r["default"]) for r in backward] == [
        ("warps4-per_sm1", 1, 4, False), ("warps4-per_sm4", 4, 13, True), ("w hoisted", 4, 13, False)]


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
