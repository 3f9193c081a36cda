"""No phase of grading can be told apart in the interpreter: what the learner's process sees is the
same in a correctness call and in the traffic check's, and the traffic check's rules hold on every
correctness call of the run.

tests/test_hostile.py grades the phase attacks of the hostile corpus (`KIND = "phase"`); on a GPU the
timed calls run without the watch but under a CUDA trace whose kernels must all be the file's own
(`grader.judge.kernel_audit`, tested below), and docs/assets/guarantees.md says what that leaves open.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from grader.judge import checks, traffic_rules
from grader.judge.learner_process import LearnerFunction, LearnerProcess
from grader.learner import call_watch, traffic
from grader.wire.failures import GradeFailure

#: A learner file that prints, in every call, what a file could look at to tell the calls apart: the
#: interpreter's hooked names, the launch front end, torch's allocator and dispatch stack, and where its
#: input and output live, then the frame of the learner's process that called it (the request it holds).
PROBE = textwrap.dedent('''
    import sys
    import torch
    import triton
    import triton.language as tl
    from triton.runtime import interpreter
    from triton.runtime.jit import JITFunction

    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)

    EMPTY_LIKE = torch.empty_like

    def copy(x):
        out = torch.empty_like(x)
        caller = sys._getframe(1).f_locals
        request = {k: v for k, v in caller.get("request", {}).items() if k not in ("id", "args", "kwargs")}
        seen = (type(interpreter._interpreter).__name__, vars(interpreter.GridExecutor)["__call__"].__qualname__,
                JITFunction.run.__qualname__, torch.empty_like is EMPTY_LIKE, torch._C._len_torch_dispatch_stack(),
                out.storage_offset(), x.storage_offset(), sorted(request.items()), sorted(caller))
        print("SEEN", seen, file=sys.stderr, flush=True)
        copy_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out
''')


@pytest.fixture
def probe(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    process = LearnerProcess(path, mode="interpreter")
    process.start()
    yield LearnerFunction(process, "copy")
    process.close()


def test_a_correctness_call_and_the_traffic_check_look_the_same_from_inside(probe):
    generator = torch.Generator().manual_seed(0)
    x = checks.randn((1000,), torch.float32, generator, "cpu")
    probe.process.new_check("matches_reference", None)  # as the judge's plugin starts every check
    checks.run_case(probe, {"x": x}, x.double())
    y = checks.randn((3079,), torch.float32, generator, "cpu")  # another size, as the traffic checks use
    probe.process.new_check("traffic", None)
    checks.expect_traffic(probe, {"x": y}, minimum_bytes=2 * y.numel() * 4, max_passes={"x": 1.0}, max_ratio=1.0)
    seen = [line for line in probe.process.output_tail().splitlines() if line.startswith("SEEN")]
    assert len(seen) == 2, seen
    assert seen[0] == seen[1], seen
    assert "_WatchedInterpreterModule" in seen[0] and "'names'" in seen[0], seen[0]  # what it looked at, seen


def _summary(loaded_x: int, size: int = 4000, outside: int = 0, launches: int = 1) -> traffic.TrafficSummary:
    tensors = {"x": {"loaded": loaded_x, "stored": 0, "size": size},
               "out": {"loaded": 0, "stored": size, "size": size}}
    if outside:
        tensors[traffic.OUTSIDE] = {"loaded": outside, "stored": 0, "size": None}
    return traffic.TrafficSummary.from_dict({"available": True, "launches": [{"kernel": "k", "grid": [1]}] * launches,
                                             "tensors": tensors})


def test_the_traffic_rules_hold_on_the_calls_made_before_the_traffic_check():
    log = traffic_rules.TrafficLog()
    traffic_rules.hold(log, "add", "inputs of shape `x` (1000,)", _summary(8000))  # no rule stated yet
    with pytest.raises(GradeFailure, match=r"read `x` 2.00 times on inputs of shape `x` \(1000,\) "
                                           r"\(3.9 KiB more than one read\): an add needs each input once"):
        traffic_rules.state(log, "add", {"x": 1.0}, "an add needs each input once", _summary(4000))


def test_the_traffic_rules_hold_on_the_calls_made_after_it_with_slack_for_size_dependent_reads():
    log = traffic_rules.TrafficLog()
    traffic_rules.state(log, "add", {"x": 1.0}, "", _summary(4000))
    traffic_rules.hold(log, "add", "a case", _summary(5000))  # 1.25 reads: a halo, within the slack
    traffic_rules.hold(log, "other", "a case", _summary(8000))  # another function: its own rules
    with pytest.raises(GradeFailure, match="read `x` 2.00 times on a case"):
        traffic_rules.hold(log, "add", "a case", _summary(8000))


def test_two_traffic_checks_of_one_function_hold_the_stricter_limit_at_the_smaller_size():
    log = traffic_rules.TrafficLog()
    traffic_rules.state(log, "add", {"x": 3.0}, "", _summary(12000, size=4000))
    traffic_rules.state(log, "add", {"x": 1.0}, "", _summary(2000, size=2000))
    assert log.rules["add"].max_passes == {"x": 1.0} and log.rules["add"].least_bytes == {"x": 2000}
    with pytest.raises(GradeFailure, match="read `x` 2.00 times"):
        traffic_rules.hold(log, "add", "a case", _summary(6000, size=3000))


def test_tensors_smaller_than_the_traffic_checks_are_left_out_of_the_pass_counts():
    """At a 1 x 1 shape a few bytes per row are whole passes (exercise 10's Liger-style file reads
    its `logits` four times there): no limit stated for a larger shape means anything."""
    log = traffic_rules.TrafficLog()
    traffic_rules.state(log, "add", {"x": 1.0}, "", _summary(4000))
    traffic_rules.hold(log, "add", "a small case", _summary(400, size=100))  # four reads of 100 bytes
    with pytest.raises(GradeFailure, match="outside every tensor on a small case"):  # at any size
        traffic_rules.hold(log, "add", "a small case", _summary(100, size=100, outside=4))


def test_bytes_outside_every_tensor_fail_any_call_as_a_masking_mistake():
    with pytest.raises(GradeFailure, match="read 64 B outside every tensor on a case \\(a load without a mask") as caught:
        traffic_rules.hold(traffic_rules.TrafficLog(), "add", "a case", _summary(4000, outside=64))
    assert caught.value.kind == "masking"


def test_bytes_outside_every_tensor_are_named_by_the_tensor_they_lie_past():
    counted = _summary(4000, outside=64).as_dict()
    counted["outside_near"] = [{"tensor": "x", "where": "past", "loaded": 64}]
    failure = traffic_rules.outside_failure(traffic.TrafficSummary.from_dict(counted), "a case")
    assert "touched 64 B outside every tensor on a case: read 64 B past the end of `x` (a load without a mask" \
        in str(failure)
    counted["outside_near"] = [{"tensor": "nowhere", "where": "past", "loaded": 64}]  # no such tensor: not named
    assert "`nowhere`" not in str(traffic_rules.outside_failure(traffic.TrafficSummary.from_dict(counted)))


def test_counts_that_contradict_what_the_judge_handed_over_are_named():
    assert traffic_rules.cross_check(_summary(4000), {"x": 4000}, 1) is None
    assert "gives `x` 4,000 bytes where the grader handed over 8,000" in str(
        traffic_rules.cross_check(_summary(4000), {"x": 8000}, 1))
    assert "gives `y` no size" in str(traffic_rules.cross_check(_summary(4000), {"y": 4000}, 1))
    assert "counts 1 kernel launches where the watch recorded 2" in str(traffic_rules.cross_check(_summary(4000), {}, 2))
    assert traffic_rules.cross_check(_summary(4000, launches=5), {}, 1) is None  # an autotuner's benchmark runs


def test_every_call_counts_with_the_hooks_installed_before_it_and_the_as_dict_taken_then(monkeypatch):
    """The learner's process's counter: hooks in place between calls (nothing counted there), each call
    counted apart, and a Traffic.as_dict replaced after it was made changes nothing it reports."""
    available, reason = traffic.traffic_available()
    if not available:
        pytest.skip(reason)
    import triton
    import triton.language as tl
    from triton.runtime import interpreter

    @triton.jit
    def double_read(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        value = tl.load(x_ptr + offsets, mask=mask) + tl.load(x_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, value, mask=mask)

    real = interpreter._interpreter
    every = traffic.EveryCall()
    try:
        hooked = interpreter._interpreter
        assert hooked is not real
        x, out = torch.randn(100), torch.empty(100)
        double_read[(1,)](x, out, 100, BLOCK=128)  # between calls: counted by nobody
        monkeypatch.setattr(traffic.Traffic, "as_dict", lambda self: {"available": True, "tensors": {}})
        counter = every.begin()
        counter.watch("x", x)
        counter.watch("out", out)
        double_read[(1,)](x, out, 100, BLOCK=128)
        every.end()
        reported = every.report(counter)
        assert reported["tensors"]["x"] == {"loaded": 800, "stored": 0, "size": 400}
        assert len(reported["launches"]) == 1
        assert interpreter._interpreter is hooked  # still in place after the call
    finally:
        every._listening.__exit__(None, None, None)
    assert interpreter._interpreter is real


def test_launch_wrappers_installed_for_the_process_stay_between_watches():
    from triton.runtime.jit import JITFunction

    original = JITFunction.run
    try:
        call_watch.install_for_process()
        installed = JITFunction.run
        assert installed is not original and installed.__name__ == "run"
        with call_watch.Watch():
            pass
        assert JITFunction.run is installed
    finally:
        call_watch._State.permanent = False
        call_watch._uninstall_launch_wrappers()
    assert JITFunction.run is original
    with call_watch.Watch():
        assert JITFunction.run is not original  # a watch outside the learner's process wraps for itself
    assert JITFunction.run is original


def test_a_call_in_the_interpreter_without_counts_or_with_unreadable_ones_fails():
    """Every call in the interpreter comes back with its counts: a process that drops them, or sends
    something that is not counts, has had its counter changed. On a GPU nothing is counted."""
    from types import SimpleNamespace

    from grader.judge.learner_process import CallOutcome

    interpreted = LearnerFunction(SimpleNamespace(mode="interpreter"), "add")
    with pytest.raises(GradeFailure, match="reported no traffic for a call in the interpreter"):
        checks._counted(interpreted, CallOutcome(result=None, traffic=None), [])
    with pytest.raises(GradeFailure, match="cannot be read"):
        checks._counted(interpreted, CallOutcome(result=None, traffic={"tensors": {"x": {"loaded": "many"}}}), [])
    on_gpu = LearnerFunction(SimpleNamespace(mode="gpu"), "add")
    assert checks._counted(on_gpu, CallOutcome(result=None, traffic=None), []) is None


# --- the kernels of the timed calls (GPU; the judge's side, which needs no GPU) ---------------------

def test_the_kernels_a_file_defines_are_read_from_its_syntax(tmp_path):
    from grader.judge import kernel_audit

    source = tmp_path / "learner.py"
    source.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl
        from triton import jit

        @triton.jit
        def add_kernel(x_ptr):
            pass

        @triton.autotune(configs=[], key=[])
        @jit
        def tuned_kernel(x_ptr):
            pass

        def plain(x_ptr):
            pass

        def launcher():
            @triton.jit
            def inner_kernel(x_ptr):
                pass
            return inner_kernel

        wrapped_kernel = triton.jit(plain)
        """))
    assert kernel_audit.jit_kernel_names(source) == {"add_kernel", "tuned_kernel", "inner_kernel", "plain"}
    assert kernel_audit.jit_kernel_names(tmp_path / "missing.py") == set()


TORCH_ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
COPY = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}> >(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>)"


@pytest.mark.parametrize("kernels,copied,said", [
    ({"add_kernel": 40}, False, None),
    ({"add_kernel": 40, FILL: 40}, False, None),  # an accumulator made by torch.zeros computes nothing
    ({"add_kernel": 40, COPY: 40}, True, None),  # the runner's copy into the judge's slot
    ({"add_kernel": 40, COPY: 40}, False, "not your file's Triton kernels (`void at::native::elementwise_kernel"),
    ({"add_kernel": 40, TORCH_ADD: 40}, False, "not your file's Triton kernels (`void at::native::vectorized_elementwise"),
    ({"triton_poi_fused_add_0": 40}, False, "not your file's Triton kernels (`triton_poi_fused_add_0`)"),
    ({"add_kernel": 39}, False, "shows 39 launches of your kernels for 40 calls"),
    ({}, False, "shows 0 launches of your kernels for 40 calls"),
    (None, False, "could not trace the kernels of the timed calls"),
    ({"$error": "RuntimeError: CUPTI"}, False, "could not be read (RuntimeError: CUPTI)"),
])
def test_the_timed_calls_must_run_the_files_own_kernels(kernels, copied, said):
    from grader.judge import kernel_audit

    failure = kernel_audit.audit(kernels, {"add_kernel"}, 40, copied=copied)
    if said is None:
        assert failure is None
    else:
        assert failure is not None and said in str(failure)
