"""Exercise 6's machinery on the CPU: the transformer block, the profiling helper, and the GPU
check's grading logic (fed a CPU measurement, since CI has no GPU)."""

from __future__ import annotations

import json
import math
from collections import namedtuple
from types import SimpleNamespace

import pytest
import torch

from grader.exercises._shared import model, profiling
from grader.judge import checks
from grader.exercises.ex06_amdahl.block_measurement import measure_block
from grader.wire.failures import GradeFailure
from grader.wire.results import CheckRecord
from grader.exercises.ex06_amdahl import spec

SMALL = dict(d_model=64, n_heads=4, mlp_ratio=4)


def _x(batch=2, seq=16, d_model=64):
    return torch.randn(batch, seq, d_model, generator=torch.Generator().manual_seed(1))


def test_block_hands_its_softmax_2d_rows_and_uses_the_result():
    block = model.make_block(**SMALL)
    x = _x()
    seen = []

    def spy(rows):
        seen.append((tuple(rows.shape), rows.is_contiguous()))
        return torch.softmax(rows, dim=-1)

    with torch.inference_mode():
        reference = block(x)
        block.softmax = spy
        spied = block(x)
        block.softmax = lambda rows: torch.full_like(rows, 1.0 / rows.shape[-1])  # a wrong (uniform) softmax
        uniform = block(x)
    assert seen == [(model.score_rows(2, 16, 4), True)] == [((2 * 4 * 16, 16), True)]
    assert reference.shape == x.shape
    assert torch.equal(spied, reference)
    assert not torch.allclose(uniform, reference, atol=1e-3)  # the swap really is the softmax the block uses


def test_block_accepts_torch_softmax_itself():
    block = model.make_block(**SMALL)
    x = _x()
    with torch.inference_mode():
        reference = block(x)
        block.softmax = torch.softmax
        assert torch.equal(block(x), reference)


def test_make_block_is_reproducible_inference_only_and_leaves_the_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    a = model.make_block(**SMALL, seed=7)
    assert torch.equal(torch.rand(1), expected_next)
    b = model.make_block(**SMALL, seed=7)
    c = model.make_block(**SMALL, seed=8)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.qkv.weight, c.qkv.weight)
    assert not any(p.requires_grad for p in a.parameters())
    with pytest.raises(ValueError, match="multiple of n_heads"):
        model.Block(d_model=60, n_heads=8)


def test_profile_block_on_cpu_gives_plain_per_pass_rows():
    block = model.make_block(**SMALL)
    rows = profiling.profile_block(block, _x(batch=1), iterations=3, warmup=1)
    json.dumps(rows)  # plain data
    assert all(set(row) == {"name", "calls", "device_time_us"} for row in rows)
    times = [row["device_time_us"] for row in rows]
    assert times == sorted(times, reverse=True) and min(times) > 0
    by_name = {row["name"]: row for row in rows}
    assert by_name["aten::_softmax"]["calls"] == 1  # per pass, not per profiled window
    assert by_name["aten::addmm"]["calls"] == 4  # qkv, proj, fc1, fc2
    assert 0 < profiling.softmax_share(rows) < 1


Kernel = namedtuple("Kernel", ["name", "device", "duration"])
CPU, CUDA = torch.autograd.DeviceType.CPU, torch.autograd.DeviceType.CUDA


def _event(name, device_type=CPU, us=0.0, kernels=(), annotation=False):
    return SimpleNamespace(name=name, device_type=device_type, kernels=list(kernels), is_user_annotation=annotation,
                           is_async=False, time_range=SimpleNamespace(elapsed_us=lambda: us))


def test_device_rows_charge_kernels_to_their_operator_and_keep_triton_kernels_apart():
    events = [
        _event("aten::linear"),
        _event("aten::addmm", kernels=[Kernel("sm90_gemm", 0, 100.0)]),
        _event("aten::addmm", kernels=[Kernel("sm90_gemm", 0, 60.0)]),
        _event("aten::_softmax", kernels=[Kernel("cunn_SoftMaxForward", 0, 40.0)]),
        _event("cudaLaunchKernel"),
        # a record_function annotation that caught the Triton launch: not an operator
        _event("block_forward", kernels=[Kernel("softmax_kernel", 0, 30.0)], annotation=True),
        _event("sm90_gemm", CUDA, 100.0),
        _event("sm90_gemm", CUDA, 60.0),
        _event("cunn_SoftMaxForward", CUDA, 40.0),
        _event("softmax_kernel", CUDA, 30.0),
        _event("block_forward", CUDA, 230.0, annotation=True),  # the annotation's GPU span: not a kernel
    ]
    rows = profiling.per_pass(profiling.device_rows(events), iterations=2)
    assert rows == [
        {"name": "aten::addmm", "calls": 1, "device_time_us": 80.0},
        {"name": "aten::_softmax", "calls": 0.5, "device_time_us": 20.0},
        {"name": "softmax_kernel", "calls": 0.5, "device_time_us": 15.0},
    ]
    assert profiling.total_us(rows) == 115.0  # = all kernel time / 2 passes: nothing counted twice
    assert profiling.softmax_share(rows) == pytest.approx(35 / 115)
    assert profiling.largest(list(reversed(rows)))["name"] == "aten::addmm"


def test_device_rows_fall_back_to_kernel_names_when_a_kernel_is_charged_twice():
    events = [
        _event("aten::softmax", kernels=[Kernel("cunn_SoftMaxForward", 0, 40.0)]),
        _event("aten::_softmax", kernels=[Kernel("cunn_SoftMaxForward", 0, 40.0)]),
        _event("aten::mm", kernels=[Kernel("gemm", 0, 60.0)]),
        _event("cunn_SoftMaxForward", CUDA, 40.0),
        _event("gemm", CUDA, 60.0),
    ]
    rows = profiling.device_rows(events)
    assert sorted((r["name"], r["device_time_us"]) for r in rows) == [("cunn_SoftMaxForward", 40.0), ("gemm", 60.0)]


def test_recorded_profile_prefers_the_h200_file(tmp_path):
    placeholder = {"meta": {"device": "cpu"}, "rows": [{"seq_len": 2048, "profile": [{"name": "a", "calls": 1,
                                                                                     "device_time_us": 1.0}]}]}
    (tmp_path / spec.PLACEHOLDER.name).write_text(json.dumps(placeholder))
    record, source = spec.recorded(tmp_path)
    assert record == placeholder and "CPU placeholder" in source
    other = tmp_path / "other"
    other.mkdir()
    (other / spec.PLACEHOLDER.name).write_text(json.dumps(placeholder))
    h200 = {"meta": {"gpu": "NVIDIA H200", "torch": "2.11.0", "triton": "3.6.0", "date": "2026-12-01"}, "rows": []}
    (other / "h200-ex06-amdahl-2026-12-01.json").write_text(json.dumps(h200))
    record, source = spec.recorded(other)
    assert record == h200 and "NVIDIA H200" in source and "2026-12-01" in source


def _cpu_measurement(monkeypatch_timings):
    """measure_block on the CPU with a scripted timer: softmax torch/swapped, then block torch/swapped."""
    times = iter(monkeypatch_timings)

    def timer(fn):
        fn()
        return next(times)

    def python_softmax(rows):  # a different implementation of the same function
        shifted = rows - rows.max(dim=-1, keepdim=True).values
        e = shifted.exp()
        return e / e.sum(dim=-1, keepdim=True)

    return measure_block(python_softmax, seq=16, batch=1, device="cpu", timer=timer, iterations=1, warmup=1,
                           **SMALL)


def test_measure_block_and_its_grading_on_cpu():
    import solutions.ex06_amdahl as solution

    measured = _cpu_measurement([2.0, 1.0, 2.1, 1.1, 10.0, 9.0, 10.2, 9.1])
    json.dumps(measured)
    assert measured["softmax_error"] < 1e-6 and measured["block_error"] < 1e-5
    assert measured["local_speedup"] == 2.0 and measured["measured_speedup"] == round(10.0 / 9.0, 4)
    assert measured["softmax_shape"] == [1 * 4 * 16, 16]
    assert measured["profile"] and measured["profile_swapped"]

    f = profiling.softmax_share(measured["profile"])
    measured["measured_speedup"] = round(spec.amdahl(f, 2.0) * 1.02, 4)  # 2% off: inside the tolerance
    record = CheckRecord("spec::test_performance", "performance", False)
    summary = spec.check_measurement(solution, measured, "solutions/ex03_softmax.py (test)", "CPU test block",
                                     record=record)
    assert record.performance.passed and record.performance.details["amdahl"] is summary
    text = "\n".join(summary["lines"])
    for word in ("fraction", "local", "predicted", "measured", "ceiling", "captured", "largest"):
        assert word in text
    assert summary["fraction"] == pytest.approx(f, abs=1e-5)

    measured["measured_speedup"] = round(spec.amdahl(f, 2.0) * 1.10, 4)  # 10% off: outside
    with pytest.raises(GradeFailure, match="performance: you predicted"):
        spec.check_measurement(solution, measured, "solutions/ex03_softmax.py (test)", "CPU test block",
                               record=record)
    assert record.performance.passed is False


def test_speedup_mistakes_are_named():
    f, s = spec.SEED_F, spec.SEED_S
    assert "multiply f by s" in spec.speedup_mistake(f, s, 1 / ((1 - f) + f * s))
    assert "multiply s by f" in spec.speedup_mistake(f, s, f * s)
    assert "new time" in spec.speedup_mistake(f, s, (1 - f) + f / s)
    assert "ceiling" in spec.speedup_mistake(f, s, 1 / (1 - f))
    assert spec.captured(spec.amdahl(f, s), spec.ceiling(f)) == pytest.approx(0.279, abs=5e-4)
    assert spec.ceiling(1.0) == math.inf
