"""Tests that need an NVIDIA GPU (marker `gpu`; skipped without CUDA). Run on the lent H200 with
`python -m pytest -m gpu tests/test_gpu.py`."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import catalogue
from grader.commands import isolation

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent


def test_ceiling_is_measured_then_cached(tmp_path, monkeypatch):
    from grader import bandwidth

    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path))
    first, cached = bandwidth.measure_ceiling()
    assert not cached
    spec = bandwidth.spec_peak_gbps()
    assert first.copy_gbps > 0 and first.add_gbps > 0
    if spec:  # a measured ceiling is below the datasheet, and not absurdly so
        assert 0.5 * spec < first.ceiling_gbps < spec
    again, cached = bandwidth.measure_ceiling()
    assert cached and again == first


def test_solution_reaches_the_floor():
    exercise = catalogue.get(1)
    run = isolation.run_checks(exercise, exercise.solution_path, seed=1)
    assert run.mode == "gpu" and run.passed
    perf = run.performance
    assert perf is not None and perf.fraction >= exercise.floor
    assert perf.achieved_gbps <= perf.ceiling_gbps * 1.03


def test_illegal_memory_access_is_a_sentence_and_the_next_check_still_runs():
    run = isolation.run_checks(catalogue.get(1), HERE / "gpu_variants" / "ex01_illegal_address.py", seed=1,
                               select="matches_reference and (n2 or n3) and fp32")
    assert len(run.checks) == 2
    assert all(not c.passed for c in run.checks)
    assert all("illegal memory access" in c.message for c in run.checks), [c.message for c in run.checks]
