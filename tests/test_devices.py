"""Every learner's card, without the cards: the device model, each exercise's plan and `grade doctor`
for faked property sets of a T4, an RTX 4060, an A100-40GB, an H200 and an MI300X.

The property sets are what ``torch.cuda.get_device_properties`` reports on each card (total memory as
the driver gives it, which is less than the datasheet's). On the H200 the plans must give the sizes the
course has graded with, read from the H200's grading records: its verdicts do not move.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from grader.judge import clock
from grader import catalogue, device, known_cards, plan

ROOT = Path(__file__).resolve().parents[1]
MiB, GiB = 1 << 20, 1 << 30


CARDS = known_cards.CARDS
card = known_cards.card


def exercise_ids(e) -> str:
    return e.stem


# --- the device model ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, vendor, arch, bf16, cache_mib, warp", [
    ("T4", "NVIDIA", "sm_75", False, 4, 32),
    ("RTX 4060", "NVIDIA", "sm_89", True, 24, 32),
    ("A100-40GB", "NVIDIA", "sm_80", True, 40, 32),
    ("H200", "NVIDIA", "sm_90", True, 60, 32),
    ("MI300X", "AMD", "gfx942", True, 256, 64),  # timed inputs are sized past the 256 MB Infinity Cache
])
def test_device_model(name, vendor, arch, bf16, cache_mib, warp):
    d = card(name)
    assert (d.vendor, d.architecture, "bf16" in d.native_dtypes, d.cache_bytes // MiB, d.warp_size) == \
        (vendor, arch, bf16, cache_mib, warp)
    assert d.gpu and d.mode == "gpu" and d.memory_bytes == CARDS[name][0].total_memory


def test_interpreter_device_and_the_one_decision(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "true")  # Triton's own spelling of "on" counts too
    assert device.interpreter_requested() and not device.gpu_usable()
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert not device.interpreter_requested()
    assert not device.gpu_usable(force_interpreter=True)
    assert not device.driver_present(("/nonexistent/nvidiactl",))
    assert not device.INTERPRETER.gpu and device.INTERPRETER.mode == "interpreter"


def test_no_gpu_driver_means_no_torch(tmp_path):
    """Without a GPU driver the decision imports no torch: `grade doctor` answers in well under 2 s."""
    import subprocess

    code = ("import sys; from grader import device; device.DRIVER_FILES = ('/nonexistent',); "
            "assert not device.current().gpu; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_emulated_card_plans_with_its_limit(monkeypatch):
    monkeypatch.setenv(device.MEMORY_LIMIT_VARIABLE, "8")
    small = device.from_properties(CARDS["H200"][0], memory_limit=device.memory_limit())
    assert small.memory_bytes == 8 * GiB and small.emulated
    assert any("emulated" in value for _, value in small.describe())
    monkeypatch.setenv(device.MEMORY_LIMIT_VARIABLE, "eight")
    with pytest.raises(ValueError, match="in GiB"):
        device.memory_limit()



def test_an_emulated_card_holds_torchs_allocator_to_its_share(monkeypatch):
    """What the judge and the learner's process each call on a GPU, with torch's CUDA calls faked."""
    h200 = CARDS["H200"][0]
    held = []
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: h200)
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", lambda share, index: held.append((share, index)))
    monkeypatch.delenv(device.MEMORY_LIMIT_VARIABLE, raising=False)
    assert device.hold_to_memory_limit() is None and held == []
    monkeypatch.setenv(device.MEMORY_LIMIT_VARIABLE, "8")
    share = device.hold_to_memory_limit()
    assert held == [(share, 0)] and share * h200.total_memory == pytest.approx(8 * GiB)
    monkeypatch.setenv(device.MEMORY_LIMIT_VARIABLE, "400")  # more than the card has: nothing to hold
    assert device.hold_to_memory_limit() is None and len(held) == 1


def test_an_emulated_card_reaches_the_learners_process(tmp_path, monkeypatch):
    """The learner's environment is allow-listed: the emulated card's memory must be on the list, or the
    learner's allocations would meet the whole card while the judge's meet the small one."""
    from grader.judge.learner_process import LearnerModule, LearnerProcess

    monkeypatch.setenv(device.MEMORY_LIMIT_VARIABLE, "8")
    learner = tmp_path / "reads_the_card.py"
    learner.write_text("import os\n\nimport torch\n\n\n"
                       "def card_memory(x):\n"
                       f"    return torch.full_like(x, float(os.environ.get({device.MEMORY_LIMIT_VARIABLE!r}, '0')))\n")
    process = LearnerProcess(learner)
    try:
        assert LearnerModule(process).card_memory(torch.zeros(1)).item() == 8.0
    finally:
        process.close()

def test_nvml_missing_is_a_sentence(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    peak, why = device.read_nvml(0)
    assert peak is None and why.startswith("NVML is not installed")
    d = device.from_properties(CARDS["RTX 4060"][0], peak=(peak, why))
    assert dict(d.describe())["datasheet peak"] == f"unknown: {why}"


# --- the plans -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CARDS)
@pytest.mark.parametrize("exercise", catalogue.EXERCISES, ids=exercise_ids)
def test_plan(exercise, name):
    d = card(name)
    p = plan.for_exercise(exercise, d)
    assert p.dtypes + tuple(dt for dt, _ in p.skipped) == tuple(dt for dt in exercise.dtypes if dt in p.dtypes) + \
        tuple(dt for dt in exercise.dtypes if dt not in p.dtypes)
    if "bf16" in exercise.dtypes and "bf16" not in d.native_dtypes:
        assert "bf16" not in p.dtypes and d.name in p.skip_reason("bf16") and "no native bf16" in p.skip_reason("bf16")
    else:
        assert p.dtypes == exercise.dtypes and not p.skipped
    timed = p.performance
    if exercise.floor is not None:
        assert timed is not None, f"{exercise.stem}: a floor and no performance_input(device, free_bytes) in its spec"
    if timed is None:
        return
    # The timed input fits the card, with the context left over, and in a dtype the card computes.
    assert timed.held_bytes <= plan.planning_memory(d), (name, timed)
    assert timed.dtype in d.native_dtypes
    multiple = timed.data_bytes / d.cache_bytes
    round_ms = timed.held_bytes / (d.peak_gbps * 1e9) * 1e3 if d.peak_gbps else None
    if timed.cache_bound and multiple < plan.HONEST_CACHE_MULTIPLE:
        assert p.floor_note and "weaker evidence" in p.floor_note and d.name in p.floor_note and "cache" in p.floor_note
    elif timed.cache_bound and round_ms is not None and round_ms < clock.ROUND_MS / 2:
        assert p.floor_note and "weaker evidence" in p.floor_note and f"{round_ms:.1f} ms" in p.floor_note
    else:
        assert p.floor_note is None


def test_a_6_gb_card_is_asked_for_no_more_than_it_has():
    """Exercise 10's 128k-vocabulary logits, exercise 8's cache and exercise 7's shapes included."""
    six = device.emulating(card("RTX 4060"), 6 * GiB)
    for exercise in catalogue.EXERCISES:
        timed = plan.for_exercise(exercise, six).performance
        if timed is not None:
            assert timed.held_bytes <= plan.planning_memory(six), (exercise.stem, timed)


def _h200_labels() -> dict[int, str]:
    """The inputs the H200 graded every solution on, as the grading records say."""
    labels = {}
    record = json.loads((ROOT / "docs/measurements/h200-grading-2026-11-30.json").read_text())
    for row in record["exercises"]:
        performance = row.get("performance") or {}
        if "input" in performance:
            labels[row["exercise"]] = performance["input"]
    for row in json.loads((ROOT / "docs/measurements/h200-grading-2026-12-02.json").read_text())["rows"]:
        verdict = row.get("verdict") or ""  # "... (at LABEL)", or "(the weaker of the two shapes: LABEL)" before
        shape = (verdict.partition("(the weaker of the two shapes: ")[2] or verdict.partition(" (at ")[2]).rstrip(")")
        if row.get("kind") == "solution" and shape:
            labels[row["exercise"]] = shape
    return labels


def test_the_h200_plan_is_what_the_h200_graded():
    h200 = card("H200")
    labels = _h200_labels()
    assert len(labels) >= 7
    for number, recorded in labels.items():
        p = plan.for_exercise(catalogue.get(number), h200)
        assert p.dtypes == catalogue.get(number).dtypes and p.floor_note is None
        label = p.performance.label
        # exercise 6's record names the card first, exercise 7's the weaker of causal or not after it
        assert recorded in (label, f"{h200.name}, {label}", f"{label}, causal", f"{label}, not causal"), \
            (number, recorded, label)


def test_declared_dtypes_cover_the_checks():
    """Every dtype a spec's checks are parametrized with is in its manifest's ``dtypes``, and bf16 is declared
    exactly where some check runs the kernel in it (the plan skips what the manifest declares)."""
    names = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}

    def found(value):
        if isinstance(value, torch.dtype):
            yield names[value]
        elif isinstance(value, (tuple, list)):
            for v in value:
                yield from found(v)

    for exercise in catalogue.EXERCISES:
        spec = plan.spec_of(exercise)
        used = set()
        for fn_name in dir(spec):
            fn = getattr(spec, fn_name)
            if not fn_name.startswith("test_") or not callable(fn):
                continue
            if fn_name == "test_bf16":
                used.add("bf16")
            for mark in getattr(fn, "pytestmark", []):
                if mark.name == "parametrize":
                    used.update(found(list(mark.args[1])))
        assert used <= set(exercise.dtypes), (exercise.stem, used, exercise.dtypes)
        assert ("bf16" in used) == ("bf16" in exercise.dtypes), exercise.stem


# --- what grade doctor prints ----------------------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("T4", ["Tesla T4 (NVIDIA, CUDA, sm_75)", "40 SMs, warp size 32, 1024 threads (32 warps) each",
            "bf16 skipped: this card has no native bfloat16 arithmetic", "320 GB/s"]),
    ("RTX 4060", ["sm_89", "24 SMs", "L2 24 MiB", "bf16 graded", "272 GB/s"]),
    ("A100-40GB", ["sm_80", "108 SMs", "L2 40 MiB", "bf16 graded", "1555 GB/s"]),
    ("H200", ["NVIDIA H200 (NVIDIA, CUDA, sm_90)", "132 SMs", "140 GiB, L2 60 MiB", "4814 GB/s"]),
    ("MI300X", ["AMD Instinct MI300X (AMD, HIP, gfx942)", "304 CUs, warp size 64, 2048 threads (32 warps) each",
                "last-level cache 256 MiB", "unknown: AMD cards have no NVML"]),
])
def test_doctor_prints_the_card(name, expected, monkeypatch):
    from rich.console import Console

    from grader import bandwidth
    from grader.commands import cli
    from grader.learner import mode

    d = card(name)
    monkeypatch.setattr(device, "current", lambda force_interpreter=False: d)
    monkeypatch.setattr(mode, "select", lambda force_interpreter=False: "gpu")
    ceiling = bandwidth.Ceiling(gpu=d.name, driver=d.driver, ceiling_gbps=100.0, copy_gbps=98.0, add_gbps=100.0,
                           buffer_bytes=GiB, measured_at="2026-12-03 12:00:00", torch=torch.__version__)
    monkeypatch.setattr(bandwidth, "measure_ceiling", lambda refresh=False: (ceiling, True))
    console = Console(width=400, record=True)
    assert cli.cmd_doctor(SimpleNamespace(interpreter=False, refresh=False), console) == 0
    text = " ".join(console.export_text().split())
    for part in expected + ["measured ceiling 100 GB/s"]:
        assert part in text, (part, text)


def test_doctor_without_a_gpu(monkeypatch):
    from rich.console import Console

    from grader.commands import cli

    console = Console(width=400, record=True)
    assert cli.cmd_doctor(SimpleNamespace(interpreter=True, refresh=False), console) == 0
    text = " ".join(console.export_text().split())
    assert "none: kernels run in Triton's interpreter" in text and "interpreter fixes" in text


def test_an_h200_held_to_8_gib_says_its_rounds_are_short_where_a_real_8_gb_card_does_not():
    """The input sets the emulated card holds cross its memory in 0.8-1.2 ms at the H200's datasheet bandwidth
    (a real 8 GB card's, the RTX 4060's, in 14-22 ms; the whole H200's in 7-19): every cache-bound plan there
    says its verdict is weaker evidence, and none on the RTX 4060 or the whole H200."""
    small_h200 = device.emulating(card("H200"), 8 * GiB)
    for exercise in catalogue.EXERCISES:
        for d, noted in ((small_h200, True), (card("RTX 4060"), False), (card("H200"), False)):
            p = plan.for_exercise(exercise, d)
            if p.performance is None or not p.performance.cache_bound:
                continue
            assert bool(p.floor_note) == noted, (exercise.stem, d.name, d.memory_bytes, p.floor_note)
            if noted:  # the shorter of the two reasons says which (exercise 2's input is just under 3 caches)
                assert "weaker evidence" in p.floor_note and ("rounds of at least 4 ms" in p.floor_note
                                                              or "cache" in p.floor_note)


def test_a_card_too_small_to_measure_honestly_says_so():
    """Held to 2 GiB, the RTX 4060's timed inputs cannot span several of its 24 MiB caches: every cache-bound
    plan whose input falls short says so in the floor's wording."""
    tiny = device.emulating(card("RTX 4060"), 2 * GiB)
    noted = []
    for exercise in catalogue.EXERCISES:
        p = plan.for_exercise(exercise, tiny)
        if p.performance is not None and p.performance.cache_bound and \
                p.performance.data_bytes < plan.HONEST_CACHE_MULTIPLE * tiny.cache_bytes:
            assert p.floor_note and "weaker evidence" in p.floor_note
            noted.append(exercise.number)
    assert noted, "no exercise fell short at 2 GiB: the wording is not exercised"
