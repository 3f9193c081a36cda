"""The checks every exercise's spec is built from.

A spec (``grader/exercises/exNN_*/spec.py``) is an ordinary pytest module that runs in the judge: the
process that decides verdicts and never imports learner code. Its tests make inputs with
`randn`, compute a float64 reference, and hand both to `run_case`, which:

1. copies each input into a NaN-guarded buffer (`grader.wire.guards`) in the memory the judge shares
   with the learner's process (`grader.wire.arena`),
2. calls the learner's function there (`grader.judge.learner_process`): launches, torch ops and
   poisoned output allocations are watched on that side (`grader.learner.call_watch`, help for honest
   mistakes) and the outputs come back as the whole guarded buffers,
3. turns an exception into a sentence (`grader.wire.failures`),
4. checks that a Triton kernel was launched, that torch did not compute or fill anything,
   that nothing was written outside the output or into an input (the judge reads the guards),
5. compares with the reference (`grader.judge.compare`), and, when that fails, reruns with different
   guard contents to tell whether the kernel reads outside its inputs,
6. in the interpreter, holds the bytes the call moved to the traffic checks' rules
   (`grader.judge.traffic_rules`: nothing outside every tensor, no input read more often than allowed).

`expect_traffic` holds the bytes the kernels moved (counted in Triton's interpreter, in every call)
to the lesson and states its limits for every other call of the run; `measure_bandwidth` is the
GPU-only performance check, timed by the judge's clock (`grader.judge.clock`).

An input the function is meant to overwrite (exercise 10 writes the gradient into ``logits``) is
named in ``run_case(..., inplace={"logits": expected})``: every element of its view must then be
overwritten with ``expected`` (float64, or a callable that checks the view), and its guards and
row gaps must still stay untouched. `peak_memory` measures what one call allocates (the CUDA
allocator's peak on a GPU, the sum of the tensors it allocates in the interpreter).

A spec's function arguments may also be plain callables of the judge's own (the course's tests
of this module do that): they are called in this process under the same watch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from grader.learner import interpreter_fixes
from grader.wire import guards
from grader.judge.compare import Tolerance, dtype_name, expect_close
from grader.wire.failures import GradeFailure, describe_exception
from grader.judge.learner_process import CallOutcome, LearnerFunction
from grader.wire.results import CheckRecord, Kind, PerformanceRecord
from grader.learner import call_watch
from grader.learner.call_watch import Launch, Watch

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


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
    inputs: dict[str, torch.Tensor]


def record_of(fn: Any) -> CheckRecord | None:
    """The record of the check being run, reached through the learner function it calls."""
    process = getattr(fn, "process", None)
    return getattr(process, "record", None)


def bf16_trustworthy(fn: Any) -> bool:
    """Does the interpreter that runs ``fn`` compute bf16 as a GPU does (`grader.learner.interpreter_fixes`)?
    For a learner function: as its process said when it started."""
    process = getattr(fn, "process", None)
    if process is not None:
        hello = process.ready()
        return bool((hello.get("fixes") or {}).get("bf16"))
    return interpreter_fixes.bf16_trustworthy()


def mode_of(fn: Any) -> str:
    process = getattr(fn, "process", None)
    return getattr(process, "mode", "interpreter")


def _call(fn: Callable, args: list, kwargs: dict, *, names: dict[str, str] | None = None,
          on_allocate=None) -> CallOutcome:
    """Call ``fn`` watched: in the learner's process for a `LearnerFunction`, here otherwise."""
    if isinstance(fn, LearnerFunction):
        outcome = fn.process.call(fn.__name__, args, kwargs, names=names)
        fn.last = outcome
        return outcome
    watch = Watch(on_allocate=on_allocate)
    try:
        with watch:
            result = fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # a local callable in the course's own tests
        raise describe_exception(exc, None) from None
    outcome = CallOutcome(result=result, launches=watch.result.launches, computed=watch.result.computed,
                          fills=watch.result.filled_outputs(result), outputs=watch.result.outputs)
    first = result[0] if isinstance(result, tuple) and result else result
    outcome.returned = outcome.output_for(first)
    return outcome


def _where(regions: dict[str, int], name: str) -> str:
    words = {"after": f"past the end of `{name}`", "before": f"before the start of `{name}`",
             "gaps": f"into the gaps between the rows of `{name}`"}
    return ", ".join(f"{count} element{'s' if count != 1 else ''} {words[region]}" for region, count in regions.items())


def _result_tensors(result: Any) -> list[torch.Tensor]:
    """The tensors a learner's function returned: one tensor, or those in a tuple or list."""
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [item for item in result if isinstance(item, torch.Tensor)]
    return []


def _output_names(outcome, result: Any, out_name: str | tuple[str, ...]) -> dict[int, str]:
    """Names of the intercepted allocations the function returned, by the allocation's id: ``out_name``
    for one tensor, or the names in ``out_name`` for the items of a returned tuple, in order."""
    if isinstance(out_name, str):
        returned = outcome.output_for(result)
        return {id(returned): out_name} if returned is not None else {}
    names: dict[int, str] = {}
    if isinstance(result, (tuple, list)):
        for name, item in zip(out_name, result):
            allocation = outcome.output_for(item)
            if allocation is not None:
                names.setdefault(id(allocation), name)
    return names


def check_outcome(outcome: CallOutcome, guarded_inputs: list[guards.GuardedTensor], *,
                  out_name: str | tuple[str, ...] = "out", allow_fill: bool = False,
                  max_launches: int | None = None, inplace: tuple[str, ...] = ()) -> guards.GuardedTensor | None:
    """What every call must satisfy: a Triton launch, no torch compute or fill, nothing written
    outside the outputs or into the inputs (except the inputs named in ``inplace``, which the
    contract lets the learner overwrite, but never their guards). ``out_name`` names the returned
    tensor, or the items of a returned tuple in order (``("y", "rstd")``). Returns the allocation
    the (first) returned tensor views, if any."""
    if not outcome.launches:
        raise GradeFailure(
            "your function returned without launching a Triton kernel: call your kernel with "
            "`kernel[grid](...)` (the answer must come from it)"
        )
    if outcome.computed:
        ops = ", ".join(dict.fromkeys(outcome.computed))
        returned_dtype = getattr(outcome.result, "dtype", None)
        input_dtypes = {g.view.dtype for g in guarded_inputs if g.role == "input" and g.view.is_floating_point()}
        if set(outcome.computed) <= {call_watch.CAST} and len(input_dtypes) == 1 \
                and returned_dtype is not None and returned_dtype not in input_dtypes:
            given = dtype_name(next(iter(input_dtypes)))  # a cast after the kernel: the dtype is the mistake
            raise GradeFailure(
                f"your function returned {dtype_name(returned_dtype)} for {given} inputs, through a torch "
                f".to() / .float() after your kernel (a full extra copy): return the kernel's output in the "
                f"inputs' dtype, {given}")
        raise GradeFailure(
            f"part of the answer was computed with torch ({ops}), not by your kernel: everything "
            "between the loads and the store belongs in the Triton kernel"
        )
    if outcome.fills and not allow_fill:
        index = outcome.fills[0][0]
        name = out_name if isinstance(out_name, str) else out_name[index] if index < len(out_name) else "an output"
        ops = ", ".join(dict.fromkeys(fill for i, fill in outcome.fills if i == index))
        raise GradeFailure(
            f"`{name}` was filled with torch before your kernel ran ({ops}): that is a whole extra kernel launch "
            "writing every byte once more. Allocate it with torch.empty_like; your kernel writes every element "
            "anyway. (Only what the function returns must be written by a kernel: a scratch buffer it does not "
            "return may be made with any torch factory, torch.zeros included)"
        )
    if max_launches is not None and len(outcome.launches) > max_launches:
        names = ", ".join(launch.kernel for launch in outcome.launches)
        raise GradeFailure(
            f"one call launched {len(outcome.launches)} kernels ({names}); this exercise asks for "
            f"{'exactly one' if max_launches == 1 else f'at most {max_launches}'}"
        )
    returned = outcome.returned
    names = _output_names(outcome, outcome.result, out_name)
    for out in outcome.outputs:
        name = names.get(id(out), "a tensor you allocated")
        regions = out.outside_writes()
        if regions:
            raise GradeFailure(f"your kernel wrote {_where(regions, name)} (is the store's mask missing or wrong?)",
                               kind=Kind.MASKING)
    for g in guarded_inputs:
        regions = g.outside_writes()
        if regions:
            if g.name in inplace:
                raise GradeFailure(f"your kernel wrote {_where(regions, g.name)}: only the elements of `{g.name}` "
                                   "itself may be overwritten (is the store's mask missing or wrong?)", kind=Kind.MASKING)
            raise GradeFailure(f"your kernel wrote {_where(regions, g.name)}: inputs are read-only", kind=Kind.MASKING)
        inside = g.inside_writes()
        if inside and g.name not in inplace:
            raise GradeFailure(f"your kernel changed {inside} element{'s' if inside != 1 else ''} of the input "
                               f"`{g.name}`: inputs are read-only", kind=Kind.COVERAGE)
    return returned


def _on_device(value: Any, device: torch.device) -> Any:
    """``value`` with its tensors copied to ``device`` (unchanged when they are there already)."""
    if isinstance(value, torch.Tensor):
        return value if value.device == device else value.to(device)
    if isinstance(value, tuple):
        return tuple(_on_device(v, device) for v in value)
    if isinstance(value, list):
        return [_on_device(v, device) for v in value]
    return value


def _reads_outside(fn: Callable, args: list, kwargs: dict, guarded_inputs: list[guards.GuardedTensor],
                   first: Any, originals: dict[str, torch.Tensor] | None = None,
                   names: dict[str, str] | None = None) -> tuple[str, str] | None:
    """Rerun with finite values in one region around one input at a time (the gaps between its
    rows, past its end, before its start): if the answer moves, the kernel reads there.

    ``first`` is the first call's result: a tensor, or a tuple of them (every one is compared).
    ``originals`` holds the values of the inputs the function overwrites (``inplace``): each rerun
    starts from them, and what the rerun writes there counts as part of the answer.
    Returns (input name, region) or None."""
    originals = originals or {}
    written = {g.name: g for g in guarded_inputs if g.name in originals}
    baseline = [guards.bits_view(t.detach()).clone() for t in _result_tensors(first)]
    baseline_written = {name: guards.bits_view(g.view).clone() for name, g in written.items()}

    def moved(again) -> bool:
        outputs = _result_tensors(again)
        if len(outputs) != len(baseline) or any(o.shape != b.shape for o, b in zip(outputs, baseline)):
            return False
        if any(bool((guards.bits_view(o.detach()) != b).any()) for o, b in zip(outputs, baseline)):
            return True
        return any(bool((guards.bits_view(g.view) != baseline_written[name]).any()) for name, g in written.items())

    try:
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
                        again = _call(fn, args, kwargs, names=names).result
                    except GradeFailure:
                        return None
                    if moved(again):
                        return g.name, region
                finally:
                    g.buffer.copy_(saved)
                    g.snapshot = guards.bits_view(g.buffer).clone()
        return None
    finally:  # the views again hold what the graded call wrote
        for name, g in written.items():
            guards.bits_view(g.view).copy_(baseline_written[name])


_READ_WORDS = {
    "after": "read past the end of `{name}`",
    "before": "read before the start of `{name}`",
    "gaps": "read the gaps between the rows of `{name}` (does your offset use the row stride, `stride(0)`, "
            "rather than the row length?)",
}


def guard_all(fn: Callable, inputs: dict[str, Any], kwargs: dict | None
              ) -> tuple[list, dict, list[guards.GuardedTensor], dict[str, str]]:
    """Positional args and kwargs with every tensor replaced by a view into a guarded copy (in the
    memory shared with the learner's process when ``fn`` runs there), and the argument names."""
    guarded: list[guards.GuardedTensor] = []
    process = getattr(fn, "process", None) if isinstance(fn, LearnerFunction) else None
    names: dict[str, str] = {}

    def guard(key: str, name: str, value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        if process is not None:
            g = guards.guard_input(name, value, allocate=process.allocate)
            process.set_device(g.buffer, value.device.type)
        else:
            g = guards.guard_input(name, value)
        guarded.append(g)
        names[key] = name
        return g.view

    args = [guard(str(index), name, value) for index, (name, value) in enumerate(inputs.items())]
    kwargs = {name: guard(name, name, value) for name, value in (kwargs or {}).items()}
    return args, kwargs, guarded, names


def run_case(fn: Callable, inputs: dict[str, Any], expected: torch.Tensor | Callable[[Any], None], *,
             out_name: str | tuple[str, ...] = "out", dtype: torch.dtype | None = None,
             tolerance: Tolerance | None = None, kwargs: dict | None = None, allow_fill: bool = False,
             max_launches: int | None = None,
             inplace: dict[str, torch.Tensor | Callable[[torch.Tensor], None]] | None = None) -> CaseReport:
    """Call ``fn(*inputs.values(), **kwargs)`` with guarded inputs and check everything.

    ``expected`` is the float64 reference, or a callable that checks the result itself (raising
    GradeFailure). Tensors in ``inputs`` are copied into guarded buffers keeping their strides.
    A function that returns several tensors (a tuple) is checked by a callable ``expected``;
    ``out_name`` then names them in order (``("y", "rstd")``) for the messages about writes.

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
    args, kwargs, guarded_inputs, names = guard_all(fn, inputs, kwargs)
    originals = {g.name: g.view.clone() for g in guarded_inputs if g.name in inplace}
    outcome = _call(fn, args, kwargs, names=names)
    result = outcome.result
    returned = check_outcome(outcome, guarded_inputs, out_name=out_name, allow_fill=allow_fill,
                             max_launches=max_launches, inplace=tuple(inplace))
    device = next((v.device for v in list(inputs.values()) + list((kwargs or {}).values())
                   if isinstance(v, torch.Tensor)), torch.device("cpu"))
    try:
        if callable(expected):
            # On the device the inputs were made on, as the spec's reference is: the learner's outputs
            # come back through host memory (the whole guarded buffers, checked above).
            expected(_on_device(result, device))
        else:
            expect_close(result, expected, name=out_name if isinstance(out_name, str) else out_name[0],
                         dtype=dtype, tolerance=tolerance, poisoned=returned is not None)
        for g in guarded_inputs:
            if g.name in inplace:
                want = inplace[g.name]
                if callable(want):
                    want(_on_device(g.view, device))
                else:
                    expect_overwritten(g.name, g.view, originals[g.name], want)
    except GradeFailure as failure:
        if mode_of(fn) == "interpreter" and getattr(result, "dtype", None) == torch.bfloat16 \
                and "tolerance" in str(failure) and not bf16_trustworthy(fn):
            # Only where the bf16 fix could not be installed (an interpreter it does not know).
            failure = GradeFailure(f"{failure}. Note: {interpreter_fixes.BF16_ON_GPU_ONLY}: a GPU decides",
                                   kind=failure.kind)
        overlap = _overlapping_programs(outcome, result, out_name if isinstance(out_name, str) else out_name[0]) \
            if failure.kind == Kind.COVERAGE and returned is not None else None
        if overlap:
            raise GradeFailure(overlap, kind=Kind.COVERAGE) from None
        culprit = (_reads_outside(fn, args, kwargs, guarded_inputs, result, originals, names)
                   if _result_tensors(result) else None)
        if culprit:
            name, region = culprit
            raise GradeFailure(
                _READ_WORDS[region].format(name=name) + f": your answer changes when the memory there "
                f"changes, so a load reads outside `{name}` (a missing or wrong mask or offset). {failure}",
                kind=Kind.MASKING
            ) from None
        raise failure from None
    _hold_traffic(fn, outcome, guarded_inputs)
    named = {g.name: g.view for g in guarded_inputs}
    return CaseReport(result, outcome.launches, named)


def _counted(fn: LearnerFunction, outcome: CallOutcome, guarded_inputs: list[guards.GuardedTensor]):
    """The call's traffic as the learner's process counted it, cross-checked against what the judge
    handed over and the launches the watch recorded (`grader.judge.traffic_rules.cross_check`); None
    on a GPU, where nothing is counted."""
    from grader.judge import traffic_rules
    from grader.learner import traffic

    if not outcome.traffic:
        if mode_of(fn) != "interpreter":
            return None
        # Every call in the interpreter comes back with its counts (or with why there are none).
        raise GradeFailure("your process reported no traffic for a call in the interpreter: the byte counter in "
                           "your process was changed")
    try:
        counted = traffic.TrafficSummary.from_dict(outcome.traffic)
    except (TypeError, ValueError, AttributeError):
        raise GradeFailure("the traffic your process reported cannot be read: the byte counter in your process "
                           "was changed") from None
    if counted.available:
        sizes = {g.name: g.view.numel() * g.view.element_size() for g in guarded_inputs}
        failure = traffic_rules.cross_check(counted, sizes, len(outcome.launches))
        if failure is not None:
            raise failure
    return counted


def _hold_traffic(fn: Callable, outcome: CallOutcome, guarded_inputs: list[guards.GuardedTensor]) -> None:
    """Every correctness call in the interpreter is held to the traffic checks' rules
    (`grader.judge.traffic_rules`): no byte outside every tensor, no input read more often than a
    traffic check of the same function allows."""
    from grader.judge import traffic_rules

    if not isinstance(fn, LearnerFunction):
        return
    counted = _counted(fn, outcome, guarded_inputs)
    if counted is None:
        return
    case = traffic_rules.describe_case({g.name: tuple(g.view.shape) for g in guarded_inputs})
    traffic_rules.hold(fn.process.traffic_log, fn.__name__, case, counted)


def _overlapping_programs(outcome: CallOutcome, result: Any, name: str) -> str | None:
    """The sentence for an output whose written part is the mark of programs that all start near
    element 0: one kernel launch of P programs, handed a block B (a power of two), wrote exactly elements
    0 .. B + P - 2 (each program shifted by one element from the last: ``offs = pid + tl.arange(0, B)``).
    None otherwise."""
    if len(outcome.launches) != 1 or not isinstance(result, torch.Tensor) or result.numel() == 0:
        return None
    launch = outcome.launches[0]
    programs = launch.programs
    if not programs or programs < 2:
        return None
    written = ~guards.is_poison(result.detach().reshape(-1)).cpu()
    count = int(written.sum())
    block = count - (programs - 1)
    if count == written.numel() or block < 2 or block & (block - 1) or not bool(written[:count].all()):
        return None
    # The launch must have been handed that block (a constexpr such as BLOCK_SIZE = 1024): rows of a 2-D
    # output cut short can leave a written prefix of the same length by chance, never with that argument.
    constant = next((key for key, value in launch.arguments.items() if type(value) is int and value == block), None)
    if constant is None:
        return None
    return (f"left {written.numel() - count} of {written.numel()} elements of `{name}` unwritten: your {programs} "
            f"programs wrote only `{name}[0]` to `{name}[{count - 1}]` between them, one block of {block} and "
            f"{programs - 1} more. Every program starts at element `pid`, not `pid * {constant}`: the blocks "
            "overlap, each one element past the last, instead of following one another")


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
        from grader.judge.compare import DEFAULT_TOLERANCES

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
        from grader.judge.compare import _index

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

    On a GPU the function is called once first (compiling and autotuning allocate too), then again
    under the allocator's watch in the learner's process: ``torch.cuda.max_memory_allocated()``
    during the call minus what was allocated before it (the inputs, copied there first, do not
    count). In the interpreter, the tensors the call allocates are intercepted and their sizes added
    up. The call's answer is returned unchecked.
    """
    # A copy: the call may write its inputs in place (exercise 10 writes the gradient over the
    # logits), and the caller's tensors must come back as they were handed over.
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs.values()]
    extra = dict(kwargs or {})
    if mode_of(fn) == "gpu" and isinstance(fn, LearnerFunction):
        fn(*args, **extra)
        outcome = fn.process.call(fn.__name__, args, extra, memory=True)
        return MemoryReport(int((outcome.memory or {}).get("peak_bytes", 0)), "cuda allocator peak", [],
                            outcome.result)
    # Named as every other call names its inputs: the request looks like a correctness call's.
    names = {str(index): name for index, (name, value) in enumerate(inputs.items()) if isinstance(value, torch.Tensor)}
    names |= {name: name for name, value in extra.items() if isinstance(value, torch.Tensor)}
    outcome = _call(fn, args, extra, names=names)
    allocations = [(tuple(g.view.shape), dtype_name(g.view.dtype), g.view.numel() * g.view.element_size())
                   for g in outcome.outputs]
    return MemoryReport(sum(size for _, _, size in allocations), "sum of allocations", allocations, outcome.result)


def expect_traffic(fn: Callable, inputs: dict[str, Any], *, minimum_bytes: int,
                   max_passes: dict[str, float] | None = None, max_ratio: float | None = None,
                   kwargs: dict | None = None, lesson: str = "", no_atomics: str | None = None,
                   writable: tuple[str, ...] = ()) -> dict:
    """Interpreter only: count the bytes the learner's kernel moves and hold them to the lesson.

    Every tensor in ``inputs`` and every output the learner allocates is watched (`grader.learner.traffic`, in the learner's process):
    bytes of lanes whose mask is true, per tensor. ``max_passes`` bounds how many times an input
    may be read (``{"x": 1.0}``: a fused kernel reads ``x`` once); ``max_ratio`` bounds all bytes
    moved over ``minimum_bytes`` (the exercise's byte model). Bytes read or written outside every
    tensor (an unmasked access into the guards) always fail. With ``no_atomics`` (a sentence), any
    ``tl.atomic_*`` fails first, with that sentence: the interpreter runs programs one at a time, so
    only the counter can see an atomic whose order a GPU would leave to chance. The figures go to the check's
    record under ``traffic``.
    """
    import pytest

    from grader.judge import traffic_rules
    from grader.learner import traffic

    if mode_of(fn) != "interpreter":
        pytest.skip("traffic: counted in Triton's interpreter only (add --traffic to `grade exercise` on a GPU)")
    args, kwargs, guarded_inputs, names = guard_all(fn, inputs, kwargs)
    if isinstance(fn, LearnerFunction):
        # A call like every other: the learner's process counts the bytes of each one.
        outcome = _call(fn, args, kwargs, names=names)
        counted = _counted(fn, outcome, guarded_inputs)
    else:
        available, reason = traffic.traffic_available()
        if not available:
            pytest.skip(reason)
        with traffic.count_traffic() as counter:
            for g in guarded_inputs:
                counter.watch(g.name, g.view)
            outcome = _call(fn, args, kwargs, on_allocate=counter.watch)
        counted = traffic.TrafficSummary.from_dict(counter.as_dict())
    if not counted.available:
        pytest.skip(counted.reason)
    check_outcome(outcome, guarded_inputs, out_name="out", allow_fill=True, max_launches=None, inplace=tuple(writable))

    moved = counted.total_loaded + counted.total_stored
    ratio = moved / minimum_bytes if minimum_bytes else float("inf")
    sentence = traffic.describe(counted, minimum_bytes, max_passes)
    record = {**counted.as_dict(), "minimum_bytes": minimum_bytes, "moved_bytes": moved,
              "ratio": round(ratio, 4), "sentence": sentence}
    check = record_of(fn)
    if check is not None:
        check.extra["traffic"] = record
    if no_atomics and counted.atomics:
        kernels = ", ".join(f"`{kernel}`" for kernel in counted.atomics)
        targets = [name for name in record["tensors"] if name != traffic.OUTSIDE and counted.atomic_bytes(name)]
        into = f" into {', '.join(f'`{name}`' for name in targets)}" if targets else ""
        raise GradeFailure(f"{no_atomics} (tl.atomic_*{into} in {kernels}). {sentence}")
    outside = traffic_rules.outside_sentence(counted)
    if outside is not None:
        raise GradeFailure(f"{outside}: {sentence}", kind=Kind.MASKING)
    for name in (max_passes or {}):
        passes = counted.passes(name)
        if passes < 1.0 - 1e-9:  # what must be read was not all read: a tail left behind
            raise GradeFailure(
                f"your kernel read only {100 * passes:.1f}% of `{name}`: part of the input was never loaded (is the "
                f"grid a block short, or a mask too strict?). {sentence}")
    returned = outcome.returned
    if returned is not None and returned.name in counted.names():
        written = counted.write_passes(returned.name)
        if written < 1.0 - 1e-9:
            raise GradeFailure(
                f"your kernel wrote only {100 * written:.1f}% of `out`: part of the output was never stored (is the "
                f"grid a block short, or a mask too strict?). {sentence}")
        if written > 1.0 + 1e-9:
            clause, rest = _take_clause(sentence, f"wrote `{returned.name}` ",
                                        f"wrote `{returned.name}` {written:.2f} times")
            raise GradeFailure(
                f"your kernel {clause}, where every element needs one store: several programs stored the same "
                f"elements, so their blocks overlap (does each program start at its own block, `pid * BLOCK_SIZE`, "
                f"rather than at `pid`?). {rest}", kind=Kind.COVERAGE)
    for name, limit in (max_passes or {}).items():
        passes = counted.passes(name)
        if passes > limit + 1e-9:
            clause, rest = _take_clause(sentence, f"read `{name}` ", f"read `{name}` {passes:.2f} times")
            raise GradeFailure(f"your kernel {clause}{': ' + lesson if lesson else ''}. {rest}")
    if max_ratio is not None and ratio > max_ratio + 1e-9:
        raise GradeFailure(
            f"your kernel moved more bytes than the minimum allows (at most {max_ratio:.2f}x)"
            f"{': ' + lesson if lesson else ''}. Counted: {sentence}"
        )
    if isinstance(fn, LearnerFunction):
        # The same limits on every other correctness call of the run, made before this one and after it.
        from grader.judge import traffic_rules

        traffic_rules.state(fn.process.traffic_log, fn.__name__, max_passes or {}, lesson, counted)
    return record


def _take_clause(sentence: str, start: str, fallback: str) -> tuple[str, str]:
    """One tensor's clause of a `grader.learner.traffic.describe` sentence ("read `x` 2.00 times (...)"), and
    the rest of the sentence after "Counted:", so a failure states each figure once."""
    clauses, colon, summary = sentence.rpartition(": ")
    parts = clauses.split(", ") if colon else []
    mine = next((part for part in parts if part.startswith(start)), None)
    if mine is None:
        return fallback, f"Counted: {sentence}"
    others = [part for part in parts if part is not mine]
    return mine, "Counted: " + (", ".join(others) + ": " if others else "") + summary


def measure_bandwidth(fn: Callable, make_set: Callable[[torch.Generator], tuple[list, dict]], *, nbytes: int,
                      floor: float, verify: Callable[[torch.Tensor, list, dict], None], label: str = "",
                      output_like: Callable[[list, dict], torch.Tensor] | None = None,
                      lines: Callable[[PerformanceRecord], list[str]] | None = None,
                      least_hbm_bytes: int | None = None,
                      snapshot: Callable[[list, dict], Any] | None = None) -> PerformanceRecord:
    """GPU only: time the learner's function by the judge's clock (`grader.judge.clock`) and turn it
    into GB/s and a fraction of this GPU's ceiling.

    ``make_set(generator)`` returns one input set ``(args, kwargs)`` on the GPU (the judge makes
    several and refills them for every round); ``verify(out, args, kwargs)`` checks an output in
    full; ``nbytes`` is the exercise's *minimum* byte model for one call (each input read once,
    each output written once); ``output_like(args, kwargs)`` gives the output's shape and dtype
    (default: like the first argument); ``snapshot`` is for functions that overwrite their inputs
    (`grader.judge.clock.time_learner`). Records the result on the check and raises GradeFailure
    when the fraction is under the floor or impossibly high.

    ``least_hbm_bytes``: for an algorithm that reads its input more than once, the bytes the memory
    must move even when the L2 cache serves every re-read (exercise 10 reads each 250 KiB row twice;
    the second read can hit the 60 MB L2 of an H200). A fraction above 100% by ``nbytes`` is then
    a cache hit, not a measurement error, as long as ``least_hbm_bytes`` stays under the ceiling.
    """
    from grader import bandwidth
    from grader.judge import clock

    generator = torch.Generator(device="cuda")
    generator.manual_seed(0)
    args, kwargs = make_set(generator)
    like = output_like(args, kwargs) if output_like else args[0]
    like = torch.empty(like.shape, dtype=like.dtype, device="cuda")
    del args, kwargs
    ceiling, cached = bandwidth.measure_ceiling()
    # No call can move the bytes the memory must move faster than the ceiling: the judge sizes its rounds
    # from that (`grader.judge.clock.sets_for`).
    fastest_ms = min(nbytes, least_hbm_bytes or nbytes) / (ceiling.ceiling_gbps * bandwidth.GB) * 1e3
    timed = clock.time_learner(fn, make_set, verify, output_like=like, snapshot=snapshot, fastest_call_ms=fastest_ms)
    achieved = bandwidth.gbps(nbytes, timed.ms)
    fraction = achieved / ceiling.ceiling_gbps
    passed, verdict = bandwidth.fraction_verdict(fraction, floor)
    least_fraction = None
    if least_hbm_bytes is not None:
        least_fraction = bandwidth.gbps(least_hbm_bytes, timed.ms) / ceiling.ceiling_gbps
        if fraction > bandwidth.MEASUREMENT_ERROR_FRACTION and least_fraction <= bandwidth.MEASUREMENT_ERROR_FRACTION:
            passed = fraction >= floor
            verdict = (f"{fraction:.0%} of the ceiling by the algorithm's byte count, more than the memory "
                       f"delivers: the L2 cache served part of the re-reads ({least_fraction:.0%} by the "
                       f"{least_hbm_bytes:,} bytes the memory must move at least; floor {floor:.0%})")
    info = bandwidth.gpu_info()
    spec = bandwidth.spec_peak_gbps()
    launches = fn.last.launches if isinstance(fn, LearnerFunction) and fn.last else []
    record = PerformanceRecord(
        passed=passed, verdict=verdict, fraction=round(fraction, 4), floor=floor,
        achieved_gbps=round(achieved, 1), ceiling_gbps=round(ceiling.ceiling_gbps, 1),
        copy_gbps=round(ceiling.copy_gbps, 1), add_gbps=round(ceiling.add_gbps, 1),
        spec_gbps=None if spec is None else round(spec, 1), ms=round(timed.ms, 5),
        ms_runs=[round(t, 5) for t in timed.rounds_ms], bytes=nbytes, input=label, gpu=info.name,
        driver=info.driver, l2_bytes=info.l2_bytes, launches=len(launches) or None, ceiling_cached=cached,
        timing=timed.to_json())
    if least_fraction is not None:
        record.details.update(least_hbm_bytes=least_hbm_bytes, least_fraction=round(least_fraction, 4))
    record.lines.extend(timed.notes)
    if timed.dobench_ms:
        record.lines.append(f"cross-check: triton.testing.do_bench in your process measured {timed.dobench_ms * 1000:.1f} µs "
                            f"per call ({bandwidth.gbps(nbytes, timed.dobench_ms):.0f} GB/s); the verdict uses the "
                            "grader's own clock")
    if lines is not None:
        record.lines[:0] = lines(record)
    from grader import device, plan

    # A card too small for an input many caches large, or for rounds as long as the clock was built for.
    note = plan.floor_note(device.current(), nbytes, round_bytes=timed.sets * min(nbytes, least_hbm_bytes or nbytes),
                           gbps=ceiling.ceiling_gbps)
    if note:
        record.lines.append(note)
        record.details["floor_note"] = note
        if not passed:  # under the floor on a card that cannot measure it honestly: reported, not failed
            on_card, sentence, decided = bandwidth.card_verdict(fraction, floor, note)
            if not decided:
                passed = record.passed = on_card
                record.verdict = sentence
                record.details["decided"] = False
    check = record_of(fn)
    if check is not None:
        check.performance = record
    if not passed:
        raise GradeFailure(f"performance: {verdict} ({achieved:.0f} of {ceiling.ceiling_gbps:.0f} GB/s on {label})"
                           + (f"; {note}" if note else ""))
    return record


def require(condition: bool, message: str) -> None:
    """Fail the current check with ``message`` unless ``condition`` holds."""
    if not condition:
        raise GradeFailure(message)


__all__ = ["FLOAT_DTYPES", "GradeFailure", "MemoryReport", "Tolerance", "check_outcome", "dtype_id",
           "expect_overwritten", "expect_traffic", "guard_all", "measure_bandwidth", "peak_memory", "randn",
           "record_of", "require", "run_case", "with_row_stride"]
