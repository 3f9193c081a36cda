"""The checks every exercise's spec is built from.

A spec (``grader/specs/exNN_*.py``) is an ordinary pytest module. Its tests make inputs with
`randn`, compute a float64 reference, and hand both to `run_case`, which:

1. copies each input into a NaN-guarded buffer (`grader.guards`),
2. calls the learner's function under a `grader.watch.Watch` (launches, torch ops, poisoned
   output allocations),
3. turns an exception into a sentence (`grader.failures`),
4. checks that a Triton kernel was launched, that torch did not compute or fill anything,
   that nothing was written outside the output or into an input,
5. compares with the reference (`grader.compare`), and, when that fails, reruns with different
   guard contents to tell whether the kernel reads outside its inputs.

An input the function is meant to overwrite (exercise 10 writes the gradient into ``logits``) is
named in ``run_case(..., inplace={"logits": expected})``: every element of its view must then be
overwritten with ``expected`` (float64, or a callable that checks the view), and its guards and
row gaps must still stay untouched. `peak_memory` measures what one call allocates (the CUDA
allocator's peak on a GPU, the sum of the tensors it allocates in the interpreter).

`measure_bandwidth` is the GPU-only performance check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from grader import guards
from grader.compare import Tolerance, dtype_name, expect_close
from grader.failures import GradeFailure, describe_exception
from grader.watch import Launch, Watch

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


@dataclass
class Context:
    """Set by the pytest plugin for the run: what the checks need to know about it."""

    learner_file: str | None = None
    mode: str = "interpreter"  # or "gpu"
    device: str = "cpu"
    #: The plugin reads these after each test.
    launches: list[int] = field(default_factory=list)
    performance: dict | None = None
    extra: dict = field(default_factory=dict)


CONTEXT = Context()


def dtype_id(dtype: torch.dtype) -> str:
    return {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}.get(dtype, dtype_name(dtype))


def randn(shape, dtype: torch.dtype, generator: torch.Generator, device: str, *, scale: float = 1.0) -> torch.Tensor:
    """Fresh normal random data (never zeros), drawn on the CPU so a seed replays on any device."""
    data = torch.randn(tuple(shape), generator=generator, dtype=torch.float32) * scale
    return data.to(dtype).to(device)


def with_row_stride(x: torch.Tensor, row_stride: int) -> torch.Tensor:
    """The same 2-D values laid out with ``row_stride`` elements between row starts (gaps between)."""
    m, n = x.shape
    assert row_stride >= n
    wide = torch.empty((m, row_stride), dtype=x.dtype, device=x.device)
    wide[:, :n] = x
    return wide[:, :n]


@dataclass
class CaseReport:
    result: Any
    launches: list[Launch]
    #: The guarded views the function was given, by name, as the call left them (an ``inplace``
    #: input holds what the function wrote into it).
    inputs: dict[str, torch.Tensor]


def _call(fn: Callable, args: list, kwargs: dict, on_allocate=None) -> tuple[Any, Watch]:
    watch = Watch(on_allocate=on_allocate)
    try:
        with watch:
            result = fn(*args, **kwargs)
            if CONTEXT.device == "cuda":
                torch.cuda.synchronize()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # the learner's code may raise anything
        raise describe_exception(exc, CONTEXT.learner_file) from None
    return result, watch


def _where(regions: dict[str, int], name: str) -> str:
    words = {"after": f"past the end of `{name}`", "before": f"before the start of `{name}`",
             "gaps": f"into the gaps between the rows of `{name}`"}
    return ", ".join(f"{count} element{'s' if count != 1 else ''} {words[region]}" for region, count in regions.items())


def _check_watch(watch: Watch, result: Any, guarded_inputs: list[guards.GuardedTensor], *,
                 out_name: str, allow_fill: bool, max_launches: int | None,
                 writable: frozenset[str] = frozenset()) -> guards.GuardedTensor | None:
    outcome = watch.result
    if not outcome.launches:
        raise GradeFailure(
            "your function returned without launching a Triton kernel: call your kernel with "
            "`kernel[grid](...)` (the answer must come from it)"
        )
    if outcome.computed:
        ops = ", ".join(dict.fromkeys(outcome.computed))
        raise GradeFailure(
            f"part of the answer was computed with torch ({ops}), not by your kernel: everything "
            "between the loads and the store belongs in the Triton kernel"
        )
    if outcome.fills and not allow_fill:
        ops = ", ".join(dict.fromkeys(outcome.fills))
        raise GradeFailure(
            f"the output was filled with torch before your kernel ran ({ops}): that is a whole extra "
            "kernel launch writing every byte once more. Allocate with torch.empty_like; your kernel "
            "writes every element anyway"
        )
    if max_launches is not None and len(outcome.launches) > max_launches:
        names = ", ".join(launch.kernel for launch in outcome.launches)
        raise GradeFailure(
            f"one call launched {len(outcome.launches)} kernels ({names}); this exercise asks for "
            f"{'exactly one' if max_launches == 1 else f'at most {max_launches}'}"
        )
    returned = outcome.output_for(result)
    for out in outcome.outputs:
        name = out_name if out is returned else "a tensor you allocated"
        regions = out.outside_writes()
        if regions:
            raise GradeFailure(f"your kernel wrote {_where(regions, name)} (is the store's mask missing or wrong?)")
    for g in guarded_inputs:
        regions = g.outside_writes()
        if regions:
            if g.name in writable:
                raise GradeFailure(f"your kernel wrote {_where(regions, g.name)}: only the elements of `{g.name}` "
                                   "itself may be overwritten (is the store's mask missing or wrong?)")
            raise GradeFailure(f"your kernel wrote {_where(regions, g.name)}: inputs are read-only")
        if g.name in writable:
            continue
        inside = g.inside_writes()
        if inside:
            raise GradeFailure(f"your kernel changed {inside} element{'s' if inside != 1 else ''} of the input `{g.name}`: inputs are read-only")
    return returned


def _reads_outside(fn: Callable, args: list, kwargs: dict, guarded_inputs: list[guards.GuardedTensor],
                   first: torch.Tensor, originals: dict[str, torch.Tensor] | None = None) -> tuple[str, str] | None:
    """Rerun with finite values in one region around one input at a time (the gaps between its
    rows, past its end, before its start): if the answer moves, the kernel reads there.

    ``originals`` holds the values of the inputs the function overwrites (``inplace``): each rerun
    starts from them, and what the rerun writes there counts as part of the answer.
    Returns (input name, region) or None."""
    originals = originals or {}
    written = {g.name: g for g in guarded_inputs if g.name in originals}
    baseline = guards.bits_view(first.detach()).clone()
    baseline_written = {name: guards.bits_view(g.view).clone() for name, g in written.items()}

    def moved(again) -> bool:
        if not isinstance(again, torch.Tensor) or again.shape != first.shape:
            return False
        if bool((guards.bits_view(again.detach()) != baseline).any()):
            return True
        return any(bool((guards.bits_view(g.view) != baseline_written[name]).any()) for name, g in written.items())

    try:
        return _rerun_each_region(fn, args, kwargs, guarded_inputs, originals, written, moved)
    finally:  # the views again hold what the graded call wrote
        for name, g in written.items():
            guards.bits_view(g.view).copy_(baseline_written[name])


def _rerun_each_region(fn, args, kwargs, guarded_inputs, originals, written, moved) -> tuple[str, str] | None:
    for g in guarded_inputs:
        if not g.buffer.dtype.is_floating_point:
            continue
        for region, where in guards.outside_regions(g).items():
            if not bool(where.any()):
                continue
            saved = g.buffer.clone()
            try:
                for name, w in written.items():
                    w.view.copy_(originals[name])
                guards.refill_input_guard(g, 0.5, where)
                try:
                    again, _ = _call(fn, args, kwargs)
                except GradeFailure:
                    return None
                if moved(again):
                    return g.name, region
            finally:
                g.buffer.copy_(saved)
                g.snapshot = guards.bits_view(g.buffer).clone()
    return None


_READ_WORDS = {
    "after": "read past the end of `{name}`",
    "before": "read before the start of `{name}`",
    "gaps": "read the gaps between the rows of `{name}` (does your offset use the row stride, `stride(0)`, "
            "rather than the row length?)",
}


def _guard_all(inputs: dict[str, Any], kwargs: dict | None) -> tuple[list, dict, list[guards.GuardedTensor]]:
    """Positional args and kwargs with every tensor replaced by a view into a guarded copy."""
    guarded: list[guards.GuardedTensor] = []

    def guard(name: str, value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        g = guards.guard_input(name, value)
        guarded.append(g)
        return g.view

    args = [guard(name, value) for name, value in inputs.items()]
    kwargs = {name: guard(name, value) for name, value in (kwargs or {}).items()}
    return args, kwargs, guarded


def run_case(fn: Callable, inputs: dict[str, Any], expected: torch.Tensor | Callable[[Any], None], *,
             out_name: str = "out", dtype: torch.dtype | None = None, tolerance: Tolerance | None = None,
             kwargs: dict | None = None, allow_fill: bool = False, max_launches: int | None = None,
             inplace: dict[str, torch.Tensor | Callable[[torch.Tensor], None]] | None = None) -> CaseReport:
    """Call ``fn(*inputs.values(), **kwargs)`` with guarded inputs and check everything.

    ``expected`` is the float64 reference, or a callable that checks the result itself (raising
    GradeFailure). Tensors in ``inputs`` are copied into guarded buffers keeping their strides.

    ``inplace`` names the inputs the function must overwrite, each with what it must hold after
    the call: a float64 tensor (`expect_overwritten`: every element written, then compared with the
    view's dtype tolerance) or a callable that checks the view itself (and may call
    `expect_overwritten`). Writes inside such an input are then expected, not reported; writes into
    its guards or row gaps fail as for any input. The result is checked first, then each in-place
    input.
    """
    inplace = inplace or {}
    unknown = set(inplace) - set(inputs) - set(kwargs or {})
    if unknown:
        raise ValueError(f"inplace names tensors that are not inputs: {sorted(unknown)}")
    args, kwargs, guarded_inputs = _guard_all(inputs, kwargs)
    originals = {g.name: g.view.clone() for g in guarded_inputs if g.name in inplace}

    result, watch = _call(fn, args, kwargs)
    CONTEXT.launches.append(len(watch.result.launches))
    returned = _check_watch(watch, result, guarded_inputs, out_name=out_name, allow_fill=allow_fill,
                            max_launches=max_launches, writable=frozenset(inplace))
    try:
        if callable(expected):
            expected(result)
        else:
            expect_close(result, expected, name=out_name, dtype=dtype, tolerance=tolerance,
                         poisoned=returned is not None)
        for g in guarded_inputs:
            if g.name in inplace:
                check = inplace[g.name]
                if callable(check):
                    check(g.view)
                else:
                    expect_overwritten(g.name, g.view, originals[g.name], check)
    except GradeFailure as failure:
        if CONTEXT.mode == "interpreter" and getattr(result, "dtype", None) == torch.bfloat16 and "tolerance" in str(failure):
            failure = GradeFailure(f"{failure}. Note: Triton's interpreter computes bfloat16 arithmetic on the raw bits "
                                   "(a known interpreter limit; a GPU is right): convert loaded values with "
                                   "`.to(tl.float32)` and round once on the store, which is what fast kernels do anyway")
        culprit = (_reads_outside(fn, args, kwargs, guarded_inputs, result, originals)
                   if isinstance(result, torch.Tensor) else None)
        if culprit:
            name, region = culprit
            raise GradeFailure(
                _READ_WORDS[region].format(name=name) + f": your answer changes when the memory there "
                f"changes, so a load reads outside `{name}` (a missing or wrong mask or offset). {failure}"
            ) from None
        raise
    named = {g.name: g.view for g in guarded_inputs}
    return CaseReport(result, watch.result.launches, named)


def expect_overwritten(name: str, view: torch.Tensor, original: torch.Tensor, expected: torch.Tensor, *,
                       tolerance: Tolerance | None = None) -> None:
    """An input the function must overwrite, after the call: every element written, then close to the
    float64 ``expected`` (the view's dtype tolerance unless ``tolerance``).

    An element whose bits are those it was handed over with is "left unchanged", unless its input
    value would pass as the answer there (a gradient of -1/3 lands on a logit of -0.332 in bfloat16 now
    and then): then nobody can tell, and the comparison decides.
    """
    unchanged = (guards.bits_view(view) == guards.bits_view(original)).reshape(-1).cpu()
    if bool(unchanged.any()):
        from grader.compare import DEFAULT_TOLERANCES

        want = expected.reshape(-1).double().cpu()
        held = original.reshape(-1).double().cpu()
        tol = tolerance or DEFAULT_TOLERANCES.get(view.dtype, DEFAULT_TOLERANCES[torch.float32])
        finite = torch.isfinite(want)
        scale = (float(want[finite].abs().max()) if bool(finite.any()) else 1.0) or 1.0
        passes = (held - want).abs() <= tol.rtol * want.abs() + tol.atol * scale
        unchanged &= ~(passes | (want == held) | (torch.isnan(want) & torch.isnan(held)))
    total = unchanged.numel()
    if total and bool(unchanged.all()):
        raise GradeFailure(
            f"`{name}` is exactly as it was handed over: your function must write its answer into `{name}` "
            f"itself (all {total} elements), not into a new tensor")
    if bool(unchanged.any()):
        from grader.compare import _index

        positions = unchanged.nonzero().flatten()
        shape = tuple(view.shape)
        shown = ", ".join(f"{name}{_index(p, shape)}" for p in positions[:3].tolist())
        more = positions.numel() - 3
        raise GradeFailure(
            f"left {positions.numel()} of {total} elements of `{name}` unchanged: {shown}"
            f"{f' and {more} more' if more > 0 else ''} still hold their input value, and every element must be "
            "overwritten (is the grid too small, or a mask too strict?)")
    expect_close(view, expected, name=name, dtype=view.dtype, tolerance=tolerance, poisoned=False)


@dataclass
class MemoryReport:
    """What one call allocated beyond its inputs."""

    #: Bytes: the CUDA allocator's peak during the call above what was allocated before it (GPU), or
    #: the sum of the sizes of the tensors the call allocated (interpreter: an upper bound of the peak).
    peak_bytes: int
    #: "cuda allocator peak" or "sum of allocations".
    how: str
    #: (shape, dtype name, bytes) of each tensor the call allocated (interpreter only; empty on a GPU).
    allocations: list[tuple[tuple[int, ...], str, int]]
    result: Any


def peak_memory(fn: Callable, inputs: dict[str, Any], *, kwargs: dict | None = None) -> MemoryReport:
    """Call ``fn(*inputs.values(), **kwargs)`` once and measure the memory the call allocates.

    On a GPU the function is called once first (compiling and autotuning allocate too), on fresh
    copies of the inputs, then timed by the allocator: ``torch.cuda.max_memory_allocated()`` during
    the call minus what was allocated before it. In the interpreter, the tensors the call allocates
    are intercepted and their sizes added up. The inputs are plain copies (no guards: their size
    must not count), and the call's answer is returned unchecked.
    """
    def fresh() -> tuple[list, dict]:
        copy = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        extra = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in (kwargs or {}).items()}
        return list(copy.values()), extra

    try:
        if CONTEXT.device == "cuda":
            args, extra = fresh()
            fn(*args, **extra)
            torch.cuda.synchronize()
            args, extra = fresh()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            result = fn(*args, **extra)
            torch.cuda.synchronize()
            return MemoryReport(torch.cuda.max_memory_allocated() - before, "cuda allocator peak", [], result)
        args, extra = fresh()
        with Watch() as watch:
            result = fn(*args, **extra)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise describe_exception(exc, CONTEXT.learner_file) from None
    allocations = [(tuple(g.view.shape), dtype_name(g.view.dtype), g.view.numel() * g.view.element_size())
                   for g in watch.result.outputs]
    return MemoryReport(sum(size for _, _, size in allocations), "sum of allocations", allocations, result)


def measure_bandwidth(fn: Callable, args: list, *, nbytes: int, floor: float,
                      check: Callable[[Any], None] | None = None, label: str = "",
                      least_hbm_bytes: int | None = None) -> dict:
    """GPU only: time ``fn(*args)``, turn it into GB/s and a fraction of this GPU's ceiling.

    ``nbytes`` is the exercise's *minimum* byte model for these arguments (each input read
    once, each output written once). Records the result for the report and raises
    GradeFailure when the fraction is under the floor or impossibly high.

    ``least_hbm_bytes``: for an algorithm that reads its input more than once, the bytes the memory
    must move even when the L2 cache serves every re-read (exercise 10 reads each 250 KiB row twice;
    the second read can hit the 60 MB L2 of an H200). A fraction above 100% by ``nbytes`` is then
    a cache hit, not a measurement error, as long as ``least_hbm_bytes`` stays under the ceiling.
    """
    from grader import perf

    result, launches = _timed_launches(fn, args)
    if check is not None:
        check(result)
    ms = perf.time_ms(lambda: fn(*args))
    ms_again = perf.time_ms(lambda: fn(*args))
    ceiling, cached = perf.measure_ceiling()
    achieved = perf.gbps(nbytes, min(ms, ms_again))
    fraction = achieved / ceiling.ceiling_gbps
    passed, verdict = perf.fraction_verdict(fraction, floor)
    least_fraction = None
    if least_hbm_bytes is not None:
        least_fraction = perf.gbps(least_hbm_bytes, min(ms, ms_again)) / ceiling.ceiling_gbps
        if fraction > perf.MEASUREMENT_ERROR_FRACTION and least_fraction <= perf.MEASUREMENT_ERROR_FRACTION:
            passed = fraction >= floor
            verdict = (f"{fraction:.0%} of the ceiling by the algorithm's byte count, more than the memory "
                       f"delivers: the L2 cache served part of the re-reads ({least_fraction:.0%} by the "
                       f"{least_hbm_bytes:,} bytes the memory must move at least; floor {floor:.0%})")
    info = perf.gpu_info()
    CONTEXT.performance = {
        "achieved_gbps": round(achieved, 1),
        "ceiling_gbps": round(ceiling.ceiling_gbps, 1),
        "copy_gbps": round(ceiling.copy_gbps, 1),
        "add_gbps": round(ceiling.add_gbps, 1),
        "spec_gbps": None if (spec := perf.spec_peak_gbps()) is None else round(spec, 1),
        "fraction": round(fraction, 4),
        "floor": floor,
        "passed": passed,
        "verdict": verdict,
        "ms": round(min(ms, ms_again), 5),
        "ms_runs": [round(ms, 5), round(ms_again, 5)],
        "bytes": nbytes,
        "input": label,
        "l2_bytes": info.l2_bytes,
        "gpu": info.name,
        "driver": info.driver,
        "ceiling_cached": cached,
        "launches": len(launches),
    }
    if least_fraction is not None:
        CONTEXT.performance.update(least_hbm_bytes=least_hbm_bytes, least_fraction=round(least_fraction, 4))
    if not passed:
        raise GradeFailure(f"performance: {verdict} ({achieved:.0f} of {ceiling.ceiling_gbps:.0f} GB/s on {label})")
    return CONTEXT.performance


def expect_traffic(fn: Callable, inputs: dict[str, Any], *, minimum_bytes: int,
                   max_passes: dict[str, float] | None = None, max_ratio: float | None = None,
                   kwargs: dict | None = None, lesson: str = "", writable: tuple[str, ...] = ()) -> dict:
    """Interpreter only: count the bytes the learner's kernel moves and hold them to the lesson.

    Every tensor in ``inputs`` and every output the learner allocates is watched (`grader.traffic`):
    bytes of lanes whose mask is true, per tensor. ``max_passes`` bounds how many times an input
    may be read (``{"x": 1.0}``: a fused kernel reads ``x`` once); ``max_ratio`` bounds all bytes
    moved over ``minimum_bytes`` (the exercise's byte model). Bytes read or written outside every
    tensor (an unmasked access into the guards) always fail. ``writable`` names inputs the function
    overwrites by contract (`run_case`'s ``inplace``). The figures go to the JSON report under
    ``traffic``.
    """
    import pytest

    from grader import traffic

    if CONTEXT.mode != "interpreter":
        pytest.skip("traffic: counted in Triton's interpreter only (add --traffic to `grade exercise` on a GPU)")
    available, reason = traffic.traffic_available()
    if not available:
        pytest.skip(reason)
    args, kwargs, guarded_inputs = _guard_all(inputs, kwargs)
    with traffic.count_traffic() as counter:
        for g in guarded_inputs:
            counter.watch(g.name, g.view)
        result, watch = _call(fn, args, kwargs, on_allocate=counter.watch)
    CONTEXT.launches.append(len(watch.result.launches))
    _check_watch(watch, result, guarded_inputs, out_name="out", allow_fill=True, max_launches=None,
                 writable=frozenset(writable))

    moved = counter.total_loaded + counter.total_stored
    ratio = moved / minimum_bytes if minimum_bytes else float("inf")
    sentence = traffic.describe(counter, minimum_bytes, max_passes)
    record = {**counter.as_dict(), "minimum_bytes": minimum_bytes, "moved_bytes": moved,
              "ratio": round(ratio, 4), "sentence": sentence}
    CONTEXT.extra["traffic"] = record
    outside = counter.loaded_bytes(traffic.OUTSIDE) + counter.stored_bytes(traffic.OUTSIDE) \
        if traffic.OUTSIDE in counter.as_dict()["tensors"] else 0
    if outside:
        raise GradeFailure(
            f"your kernel touched {traffic.format_bytes(outside)} outside every tensor (a load or store "
            f"without a mask reaches past the end): {sentence}"
        )
    for name, limit in (max_passes or {}).items():
        passes = counter.passes(name)
        if passes > limit + 1e-9:
            extra = counter.loaded_bytes(name) - int(limit * counter.size_bytes(name))
            raise GradeFailure(
                f"your kernel read `{name}` {passes:.2f} times ({traffic.format_bytes(extra)} more than "
                f"{'one read' if limit == 1 else f'{limit:.3g} reads'}){': ' + lesson if lesson else ''}; "
                f"moved {ratio:.2f}x the minimum. {sentence}"
            )
    if max_ratio is not None and ratio > max_ratio + 1e-9:
        raise GradeFailure(
            f"your kernel moved {ratio:.2f}x the minimum bytes (allowed {max_ratio:.2f}x)"
            f"{': ' + lesson if lesson else ''}. {sentence}"
        )
    return record


def _timed_launches(fn: Callable, args: list) -> tuple[Any, list[Launch]]:
    from grader.watch import count_launches

    try:
        result, launches = count_launches(fn, *args)
        torch.cuda.synchronize()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise describe_exception(exc, CONTEXT.learner_file) from None
    return result, launches


def require(condition: bool, message: str) -> None:
    """Fail the current check with ``message`` unless ``condition`` holds."""
    if not condition:
        raise GradeFailure(message)


__all__ = ["CONTEXT", "FLOAT_DTYPES", "GradeFailure", "MemoryReport", "Tolerance", "dtype_id", "expect_overwritten",
           "expect_traffic", "measure_bandwidth", "peak_memory", "randn", "require", "run_case", "with_row_stride"]
