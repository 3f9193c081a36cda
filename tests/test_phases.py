"""No phase of grading can be told apart: what the learner's process sees is the same in every call,
the traffic check's rules hold on every call, and the timed calls' kernels are audited.

The GPU side (the timed rounds watched and traced) is graded on a GPU by tools/device/phase_audit.py;
tests/test_hostile.py grades the phase attacks of the hostile corpus in the interpreter.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from grader import checks, kernel_audit, traffic, traffic_rules
from grader.failures import GradeFailure
from grader.learner_process import LearnerFunction, LearnerProcess
from grader.watch import Watch

#: A learner file that prints, in every call, what a file could look at to tell the calls apart.
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
        seen = (type(interpreter._interpreter).__name__, vars(interpreter.GridExecutor)["__call__"].__qualname__,
                JITFunction.run.__qualname__, torch.empty_like is EMPTY_LIKE, torch._C._len_torch_dispatch_stack(),
                out.storage_offset(), out.untyped_storage().nbytes(), x.storage_offset(), x.untyped_storage().nbytes())
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
    with pytest.raises(GradeFailure, match=r"read `x` 2.00 times on inputs of shape `x` \(1000,\)"):
        traffic_rules.state(log, "add", {"x": 1.0}, "an add needs each input once", _summary(4000))


def test_the_traffic_rules_hold_on_the_calls_made_after_it_with_slack_for_size_dependent_reads():
    log = traffic_rules.TrafficLog()
    traffic_rules.state(log, "add", {"x": 1.0}, "", _summary(4000))
    traffic_rules.hold(log, "add", "a case", _summary(5000))  # 1.25 reads: a halo, within the slack
    traffic_rules.hold(log, "other", "a case", _summary(8000))  # another function: its own rules
    with pytest.raises(GradeFailure, match="read `x` 2.00 times on a case"):
        traffic_rules.hold(log, "add", "a case", _summary(8000))


def test_tensors_smaller_than_the_traffic_checks_are_left_out_of_the_pass_counts():
    """At a 1 x 1 shape a few bytes per row are whole passes (exercise 10's Liger-style file reads
    its `logits` four times there): no limit stated for a larger shape means anything."""
    log = traffic_rules.TrafficLog()
    traffic_rules.state(log, "add", {"x": 1.0}, "", _summary(4000))
    traffic_rules.hold(log, "add", "a small case", _summary(400, size=100))  # four reads of 100 bytes
    with pytest.raises(GradeFailure, match="outside every tensor"):  # bytes outside count at any size
        traffic_rules.hold(log, "add", "a small case", _summary(100, size=100, outside=4))


def test_bytes_outside_every_tensor_fail_any_call():
    with pytest.raises(GradeFailure, match="outside every tensor") as caught:
        traffic_rules.hold(traffic_rules.TrafficLog(), "add", "a case", _summary(4000, outside=64))
    assert caught.value.kind == "masking"


def test_figures_that_contradict_what_the_judge_handed_over_are_named():
    assert traffic_rules.cross_check(_summary(4000), {"x": 4000}, 1) is None
    assert "handed over 8,000" in str(traffic_rules.cross_check(_summary(4000), {"x": 8000}, 1))
    assert "counts 1 kernel launches where the watch recorded 2" in str(traffic_rules.cross_check(_summary(4000), {}, 2))
    assert traffic_rules.cross_check(_summary(4000, launches=5), {}, 1) is None  # an autotuner's benchmark runs


def test_the_audit_reads_the_files_own_triton_kernels_from_its_syntax_tree(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent('''
        import triton
        from triton import jit

        @triton.autotune(configs=[], key=["n"])
        @triton.jit
        def tuned_kernel(x_ptr, n): pass

        @jit
        def plain_kernel(x_ptr): pass

        def launcher(x):
            @triton.jit(do_not_specialize=["n"])
            def inner_kernel(n): pass

        def helper(): pass
    '''))
    assert kernel_audit.jit_kernel_names(path) == {"tuned_kernel", "plain_kernel", "inner_kernel"}


def test_the_audit_fails_a_foreign_kernel_a_missing_launch_and_a_trace_it_cannot_read():
    own = {"add_kernel"}
    assert kernel_audit.audit({"add_kernel": 40}, own, 40) is None
    foreign = kernel_audit.audit({"add_kernel": 40, "void at::native::vectorized_elementwise_kernel<4>": 40}, own, 40)
    assert "not your file's Triton kernels (`void at::native::vectorized_elementwise_kernel<4>`)" in str(foreign)
    assert "shows 39 launches of your kernels for 40 calls" in str(kernel_audit.audit({"add_kernel": 39}, own, 40))
    assert "could not trace" in str(kernel_audit.audit(None, own, 40))
    assert "could not be read" in str(kernel_audit.audit({"$error": "RuntimeError: no CUPTI"}, own, 40))


def test_an_intercepted_allocation_is_planned_on_the_meta_device_never_made():
    made = []

    def make_output(name, shape, stride, dtype, device):
        made.append((tuple(shape), tuple(stride), dtype, torch.device(device).type))
        from grader import guards

        return guards.guard_output(name, shape, stride, dtype, device)

    x = torch.randn(6, 4).t()  # strides (1, 4): empty_like keeps them
    with Watch(make_output=make_output):
        out = torch.empty_like(x)
        torch.empty((3, 5), dtype=torch.float16)
    assert made == [((4, 6), (1, 4), torch.float32, "cpu"), ((3, 5), (5, 1), torch.float16, "cpu")]
    assert out.stride() == (1, 4) and out.storage_offset() > 0  # a view into the guarded buffer
    with Watch(intercept_allocations=False) as watch:
        plain = torch.empty_like(x)
        torch.empty((0,))  # nothing to guard
    assert plain.storage_offset() == 0 and not watch.result.computed and len(made) == 2
