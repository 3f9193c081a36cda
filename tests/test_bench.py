"""`grade bench` on CPU: the sweep with a fake timer, the sizes read from the manifests and the byte model
from the specs, the table, JSON and PNG it writes, and the sentences it says when it cannot run."""

from __future__ import annotations

import dataclasses
import importlib
import json
from io import StringIO

import pytest
import torch
from rich.console import Console

from grader import catalogue
from grader.commands import bench_sweep

#: Every exercise's sweep, from its manifest's [bench] and the workload it names.
CONFIGS = {e.number: bench_sweep.config_of(e) for e in catalogue.EXERCISES if e.bench is not None}
CEILING = 4000.0  # GB/s: a round number so the fractions below are easy to check
SIZES = ({"n": 1000}, {"n": 3000})
ADD = dataclasses.replace(CONFIGS[1], sizes=SIZES)
EX1_BYTES = bench_sweep.bytes_from(lambda n, element_size: 3 * n * element_size)


def one_ms(fn) -> float:
    fn()  # a real timer runs the function; so does this one, once
    return 1.0


def rows_of(rows, kernel):
    return [r for r in rows if r["kernel"] == kernel]


def test_sweep_times_every_kernel_at_every_size_with_the_spec_byte_model():
    steps = []
    rows = bench_sweep.sweep(ADD, lambda x, y: x + y, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING,
                       nbytes=EX1_BYTES, on_step=steps.append)
    assert [r["kernel"] for r in rows] == ["yours", "torch", "copy"] * 2
    assert len(steps) == len(rows) and steps[0] == "n=1000 · your kernel"
    yours = rows_of(rows, "yours")
    # 3 * n * 4 bytes in 1 ms: n = 1000 -> 12 kB -> 0.012 GB/s
    assert [r["bytes"] for r in yours] == [12_000, 36_000]  # 3 * n * 4 bytes
    copy = rows_of(rows, "copy")
    assert [r["bytes"] for r in copy] == [8_000, 24_000]  # a copy reads and writes the output once
    assert all(r["size"] == f"n={r['n']}" and r["ms"] == 1.0 for r in rows)


def test_gbps_and_fraction_follow_the_timer():
    config = dataclasses.replace(CONFIGS[1], sizes=({"n": 1 << 20},))
    timings = iter([0.005, 0.01, 0.0025])  # ms for yours, torch, copy: GPU-like figures
    rows = bench_sweep.sweep(config, lambda x, y: x + y, device="cpu", time_ms=lambda fn: next(timings),
                       ceiling_gbps=CEILING, nbytes=EX1_BYTES)
    yours, torch_row, copy = rows
    assert yours["gbps"] == pytest.approx(3 * 4 * (1 << 20) / 0.005e-3 / 1e9, rel=1e-3)  # 2517 GB/s
    assert torch_row["gbps"] == pytest.approx(yours["gbps"] / 2, rel=1e-3)
    assert copy["gbps"] == pytest.approx(2 * 4 * (1 << 20) / 0.0025e-3 / 1e9, rel=1e-3)
    assert yours["fraction"] == pytest.approx(yours["gbps"] / CEILING, rel=1e-3)


def test_a_wrong_result_is_reported_and_not_timed():
    timed = []

    def timer(fn):
        timed.append(fn)
        return 1.0

    rows = bench_sweep.sweep(ADD, lambda x, y: x - y, device="cpu", time_ms=timer, ceiling_gbps=CEILING, nbytes=EX1_BYTES)
    for row in rows_of(rows, "yours"):
        assert "wrong result at this size" in row["error"] and "gbps" not in row
    assert len(timed) == 4  # torch and copy at two sizes; yours never
    assert all("error" not in r for r in rows if r["kernel"] != "yours")


def test_the_comparison_runs_in_chunks_and_counts_every_wrong_element(monkeypatch):
    monkeypatch.setattr(bench_sweep, "COMPARE_CHUNK", 7)  # 1000 elements in 143 chunks, the last one ragged

    def last_element_wrong(x, y):
        out = x + y
        out[-1] += 1.0
        out[3] = float("nan")
        return out

    rows = bench_sweep.sweep(dataclasses.replace(ADD, sizes=({"n": 1000},)), last_element_wrong, device="cpu",
                       time_ms=one_ms, ceiling_gbps=CEILING, nbytes=EX1_BYTES)
    assert "(2 of 1000 elements off, max |difference| inf)" in rows[0]["error"]


@pytest.mark.parametrize("learner,expected", [
    (lambda x, y: (_ for _ in ()).throw(NotImplementedError("exercise 1: launch add_kernel")), "not implemented yet"),
    (lambda x, y: None, "returned NoneType, not a tensor"),
    (lambda x, y: (x + y)[:-1], "has shape"),
], ids=["stub", "returns-none", "wrong-shape"])
def test_a_failing_kernel_keeps_the_baselines(learner, expected):
    rows = bench_sweep.sweep(ADD, learner, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING, nbytes=EX1_BYTES)
    assert all(expected in r["error"] for r in rows_of(rows, "yours"))
    assert all(r.get("gbps") is not None for r in rows if r["kernel"] != "yours")


def test_a_file_that_did_not_import_is_said_once_per_row():
    rows = bench_sweep.sweep(ADD, None, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING, nbytes=EX1_BYTES,
                       learner_error="importing x.py failed: SyntaxError")
    assert [r["error"] for r in rows_of(rows, "yours")] == ["importing x.py failed: SyntaxError"] * 2


def test_a_lost_cuda_context_stops_the_sweep_with_a_sentence():
    def crashes(x, y):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    rows = bench_sweep.sweep(ADD, crashes, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING, nbytes=EX1_BYTES)
    assert "illegal memory access" in rows[0]["error"]
    assert all(r["error"].startswith("not run: the CUDA context was lost") for r in rows[1:])


def test_sizes_too_large_for_free_memory_are_skipped():
    rows = bench_sweep.sweep(ADD, lambda x, y: x + y, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING,
                       nbytes=EX1_BYTES, free_bytes=50_000)
    assert all("error" not in r for r in rows if r["n"] == 1000)
    assert all(r["error"].startswith("skipped: needs about") for r in rows if r["n"] == 3000)


def test_compile_is_timed_where_the_config_asks(monkeypatch):
    monkeypatch.setattr(bench_sweep, "_compiled", lambda fn: fn)  # no C++ compiler needed on CPU
    config = dataclasses.replace(CONFIGS[2], sizes=({"m": 3, "n": 5},))
    rows = bench_sweep.sweep(config, lambda x, b: torch.nn.functional.gelu(x + b), device="cpu", time_ms=one_ms,
                       ceiling_gbps=CEILING, nbytes=bench_sweep.bytes_from(lambda m, n, element_size: (2 * m * n + n) * element_size))
    assert [r["kernel"] for r in rows] == ["yours", "torch", "compile", "copy"]
    assert rows[0]["bytes"] == (2 * 15 + 5) * 4
    assert [r["kernel"] for r in bench_sweep.sweep(config, None, device="cpu", time_ms=one_ms, ceiling_gbps=None,
                                             nbytes=None, compile=False)] == ["yours", "torch", "copy"]


def test_byte_models_come_from_the_specs():
    assert bench_sweep.byte_model(catalogue.get(1), CONFIGS[1])({"n": 1000}, 4) == 12_000
    assert bench_sweep.byte_model(catalogue.get(2), CONFIGS[2])({"m": 3, "n": 5}, 2) == (2 * 15 + 5) * 2
    assert bench_sweep.byte_model(catalogue.get(3), CONFIGS[3])({"m": 4, "n": 8}, 4) == 2 * 4 * 8 * 4
    assert bench_sweep.byte_model(catalogue.get(5), CONFIGS[5])({"m": 4, "n": 8}, 4) == 3 * 4 * 8 * 4
    # Exercise 8 through its spec's bench_arguments: 2 sequences of 10 tokens, K and V rows of 2 KV heads
    # of 8 elements, plus q and out (2 x 4 heads x 8), in fp16.
    decode = {"B": 2, "S_k": 10, "H_q": 4, "H_kv": 2, "D": 8, "page_size": 16}
    assert bench_sweep.byte_model(catalogue.get(8), CONFIGS[8])(decode, 2) == (2 * 20 * 2 * 8 + 2 * 2 * 4 * 8) * 2
    # RMSNorm's forward: x and weight read, y written, and a float32 rstd per row.
    assert bench_sweep.byte_model(catalogue.get(9), CONFIGS[9])({"m": 4, "n": 8}, 2) == (2 * 32 + 8) * 2 + 4 * 4


def test_a_function_that_returns_a_tuple_is_checked_on_the_configs_output(monkeypatch):
    monkeypatch.setattr(bench_sweep, "_compiled", lambda fn: fn)
    config = dataclasses.replace(CONFIGS[9], sizes=({"m": 3, "n": 5},))
    nbytes = bench_sweep.byte_model(catalogue.get(9), config)

    def right(x, weight, eps):  # (y, rstd), as exercise 9's forward returns them
        return torch.nn.functional.rms_norm(x, (5,), weight, eps), torch.ones(3)

    rows = bench_sweep.sweep(config, right, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING, nbytes=nbytes,
                       dtype=torch.float32)
    assert [r["kernel"] for r in rows] == ["yours", "torch", "compile", "copy"]
    assert rows[0]["bytes"] == (2 * 15 + 5) * 4 + 3 * 4 and "error" not in rows[0]
    rows = bench_sweep.sweep(config, lambda x, weight, eps: x, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING,
                       nbytes=nbytes, dtype=torch.float32)
    assert "has shape (5,)" in rows[0]["error"]  # x[0], a row, is not y
    rows = bench_sweep.sweep(config, lambda x, weight, eps: None, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING,
                       nbytes=nbytes, dtype=torch.float32)
    assert rows[0]["error"].startswith("could not read the output from what your function returned")


def test_every_bandwidth_bench_matches_its_specs_byte_model_signature():
    """The bench calls minimum_bytes(*shape dimensions, element_size), or minimum_bytes(*bench_arguments(shape),
    element_size) where the spec defines bench_arguments: each spec must take exactly that."""
    import inspect

    for number, config in CONFIGS.items():
        if config.metric != "gbps":
            continue
        spec = importlib.import_module(catalogue.get(number).spec_module)
        params = list(inspect.signature(spec.minimum_bytes).parameters)
        arguments = getattr(spec, "bench_arguments", None)
        given = len(arguments(config.sizes[0])) if arguments else len(config.sizes[0])
        assert len(params) == given + 1 and params[-1] == "element_size", (number, params)


def test_every_config_has_sizes_its_inputs_and_a_reference():
    for number, config in CONFIGS.items():
        assert config.sizes and config.x_key in config.sizes[0], number
        tiny = {k: min(v, 8) for k, v in config.sizes[0].items()}
        args = config.make_inputs(tiny, torch.float32, "cpu")
        first = next(iter(config.baselines.values()))
        assert isinstance(first(*args), torch.Tensor)
        if config.metric == "tflops":
            assert config.flops is not None and config.flops(tiny) > 0


WITHOUT_A_BENCH = [e for e in catalogue.EXERCISES if e.bench is None]


@pytest.mark.parametrize("exercise", WITHOUT_A_BENCH, ids=lambda e: e.stem)
def test_an_exercise_without_a_bench_says_its_manifests_reason(exercise):
    with pytest.raises(bench_sweep.BenchUnavailable) as caught:
        bench_sweep.config_for(exercise.number)
    assert exercise.bench_unavailable and exercise.bench_unavailable in str(caught.value)


def test_exercises_without_a_bench_say_why():
    with pytest.raises(bench_sweep.BenchUnavailable, match="no bench sizes for exercise 42 yet"):
        bench_sweep.config_for(42)
    missing = dataclasses.replace(catalogue.get(4), slug="not_written")
    with pytest.raises(bench_sweep.BenchUnavailable, match="not written yet"):
        bench_sweep.byte_model(missing, CONFIGS[4])


def test_without_a_gpu_the_command_says_why():
    console = Console(file=StringIO(), width=120)
    with pytest.raises(bench_sweep.BenchUnavailable, match="needs an NVIDIA GPU"):
        bench_sweep.run(1, catalogue.get(1).solution_path, console)


def test_table_json_and_png_from_fake_timings(tmp_path):
    pytest.importorskip("matplotlib")
    timings = iter([1.0, 2.0, 0.8, 1.5, 3.0, 1.2])
    rows = bench_sweep.sweep(ADD, lambda x, y: x + y, device="cpu", time_ms=lambda fn: next(timings), ceiling_gbps=0.05,
                       nbytes=EX1_BYTES)
    rows.append({"kernel": "yours", "n": 9000, "size": "n=9000", "error": "out of memory at this size"})
    meta = {"exercise": 1, "gpu": "fake GPU"}
    json_path, png_path, why = bench_sweep.write_outputs(rows, ADD, meta=meta, folder=tmp_path / "bench", stem="ex01-test",
                                                   ceiling_gbps=0.05, title="Exercise 1 · add · fake GPU")
    assert why is None and json_path.name == "ex01-test.json" and png_path.name == "ex01-test.png"
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png_path.stat().st_size > 10_000
    saved = json.loads(json_path.read_text())
    assert saved["meta"] == meta and saved["rows"] == rows

    out = StringIO()
    console = Console(file=out, width=160)
    bench_sweep.report(console, rows, ADD, title="Exercise 1 · add", ceiling_gbps=0.05, json_path=json_path,
                 png_path=png_path, png_problem=None)
    text = out.getvalue()
    for label in ("your kernel", "torch", "copy (same bytes)", "n=1000", "n=3000", "n=9000"):
        assert label in text
    assert "0 GB/s" in text and "%" in text and "out of memory" in text
    assert str(png_path) in text and str(json_path) in text


def test_without_matplotlib_the_json_is_still_written(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    rows = bench_sweep.sweep(ADD, lambda x, y: x + y, device="cpu", time_ms=one_ms, ceiling_gbps=CEILING, nbytes=EX1_BYTES)
    json_path, png_path, why = bench_sweep.write_outputs(rows, ADD, meta={}, folder=tmp_path, stem="s",
                                                   ceiling_gbps=CEILING, title="t")
    assert json_path.is_file() and png_path is None and "pip install matplotlib" in why


def test_the_sweeps_are_the_manifests():
    """What `grade bench 3` sweeps is exercise 3's [bench] table: sizes, labels, dtype, compile."""
    ex3, ex10 = catalogue.get(3), catalogue.get(10)
    assert CONFIGS[3].sizes == ex3.bench.sizes and CONFIGS[3].sizes[0] == {"m": 4096, "n": 256}
    assert CONFIGS[3].x_label == "N (columns; M = 4096 rows)" and CONFIGS[3].compile
    assert CONFIGS[10].dtype == torch.bfloat16 and CONFIGS[10].copy_source is not None and ex10.bench.workload == "cross_entropy"
    for e in catalogue.EXERCISES:  # a bench, or a sentence saying why there is none: never both, never neither
        assert (e.bench is None) == bool(e.bench_unavailable), e.stem
