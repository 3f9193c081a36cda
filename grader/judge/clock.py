"""The GPU timing a verdict is decided by: the judge's clock around K calls on K input sets.

A time measured inside the learner's process can be patched, replayed from a cache, or fooled by
work left running on another stream. So the judge (which never imports learner code) times it:

1. it makes K input sets on the GPU (together many times the L2) and K output slots, and shares
   them with the learner's process once (CUDA IPC), outside the clock;
2. each round it fills every input with fresh random values and poisons every slot, waits for
   the GPU, starts its clock, tells the learner's process "go" and stops the clock when the
   answer "done" arrives. The learner's process calls the function once per set, each output
   landing in the judge's slot (`grader.learner.call_watch.redirect_allocations`; an output made elsewhere is
   copied there, inside the clock), then synchronizes the whole device;
3. it looks at sampled elements of every slot at once: poison still there means the function
   returned (or said "done") before its kernels finished, and the check fails;
4. it checks every output in full against its own reference;
5. the learner's process keeps a CUDA activity trace over every counted round, and the kernels it
   ran must all be the learner's own Triton kernels (`grader.judge.kernel_audit`): a file that
   computed with torch only in the calls it guessed were timed would otherwise be graded on torch's
   speed. (The watch of the checked calls would see it too, but inside the timed calls it cost
   exercise 9's forward half its speed on an H200; the trace adds a record per launch.)

The inputs are revealed only when the judge fills them, right before its clock starts, so a
result cannot be computed ahead; K distinct sets mean no result can be replayed; the judge's
clock cannot be patched from the learner's process. What the learner's process could still do is
report "done" late, which only makes it slower.

A round costs more than its K calls: a message each way, the processes waking, the GPU passing from
the judge's context to the learner's, the first call's Python and launcher before the GPU has work.
On an H200 that was as long as several short calls (``round_overhead_ms`` in
docs/measurements/h200-judge-clock-sets.json). Two things keep it from weighing on the verdict:

* **the twin** (`grader.learner.clock_twin`): a course-only process that opens the same sets and, in each
  of its rounds (in turns with the learner's), writes one element and synchronizes. Its quickest
  round is the round's own cost (messages, waking, the GPU's hand-over), subtracted from the
  learner's rounds. The quickest, not the median: a twin round slowed by noise must not make the
  learner's calls look faster than they are. What the twin leaves unsubtracted (the first call's
  launcher) only makes the kernel look slower;
* **enough calls per round**: the judge sizes K so that a round would last at least
  `ROUND_MS` even if every call ran at the measured ceiling (`sets_for`), between `SETS` and
  `MAX_SETS` and within half the free memory. The ``sets_rule=8`` and ``sets_rule=sized`` rows of
  docs/measurements/h200-judge-clock-sets.json time the same calls both ways, in turns, beside
  do_bench: with 8 sets exercise 9's forward read well under do_bench and far apart from turn to turn,
  sized (64 sets) within about 6% of it.

``triton.testing.do_bench`` still runs in the learner's process, as a cross-check shown beside the
verdict, never deciding it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from grader import device
from grader.judge import kernel_audit
from grader.wire import guards, protocol
from grader.wire.failures import GradeFailure

#: Input sets per round, at least and at most.
SETS = 8
MAX_SETS = 64
#: Rounds per measurement (the median round decides). Seven, not five: in a class graded twice on an H100 one
#: file's median moved 9.4 points when two of its five rounds ran slow (8.97 and 8.26 ms beside 7.42-7.55:
#: ``batch1_timing`` of docs/measurements/h100-class-rank-rounds.json). Each round costs its refill and checks,
#: outside the clock.
ROUNDS = 7
#: Rounds run before the counted ones: the first may compile and autotune (untraced), the second is the
#: first one traced, and pays for the trace's start: it ran 2.0-2.7 ms slower than the median of the rest
#: in every file of that class (9.7-10.2 ms against 7.5-7.9), a slow round counted in each median. With two,
#: the first counted round lay within -0.16 to +0.29 ms of the rest, and that class moved 4.4 points at most
#: (docs/measurements/h100-class-rank-seven-rounds.json).
WARM_UP_ROUNDS = 2
#: The shortest round the judge sizes K for, counting every call at the measured ceiling: the round's
#: unsubtracted cost (about 0.1 ms: the first call's launcher) is then a few percent of it at most.
ROUND_MS = 4.0
#: The share of free GPU memory the judge's K sets may take.
MEMORY_FRACTION = 0.5
#: Elements of each output looked at right after "done".
PROBES = 4096

MakeSet = Callable[[torch.Generator], tuple[list, dict]]
@dataclass
class Timing:
    """A median time per call by the judge's clock, with what it was made of."""

    ms: float
    rounds_ms: list[float]
    sets: int
    overhead_ms: float = 0.0  # a round's own cost, measured on the twin (grader.learner.clock_twin), subtracted
    dobench_ms: float | None = None
    raw_rounds_ms: list[float] = field(default_factory=list)  # the learner's rounds as the clock read them
    copied: bool = False  # the learner's outputs were made elsewhere and copied into the slots
    twin_rounds_ms: list[float] = field(default_factory=list)  # the twin's rounds (the quickest is subtracted)
    notes: list[str] = field(default_factory=list)  # what the verdict could not check, in sentences
    #: {kernel name: launches} in the counted rounds, from the learner's process's CUDA trace (`grader.judge.kernel_audit`).
    kernels: dict | None = None

    def to_json(self) -> dict:
        return {"method": "the judge's clock around K calls on K fresh input sets (median of rounds)",
                "sets": self.sets, "ms_per_call": round(self.ms, 5), "rounds_ms": [round(t, 5) for t in self.rounds_ms],
                "round_overhead_ms": round(self.overhead_ms, 5),
                "raw_rounds_ms": [round(t, 5) for t in self.raw_rounds_ms],
                "twin_rounds_ms": [round(t, 5) for t in self.twin_rounds_ms],
                "dobench_ms": None if self.dobench_ms is None else round(self.dobench_ms, 5),
                "dobench_ratio": None if not self.dobench_ms else round(self.dobench_ms / self.ms, 4),
                "outputs_copied": self.copied, "kernels": self.kernels}


def _refill(target: list, kwargs: dict, make_set: MakeSet, generator: torch.Generator) -> None:
    """New values in the shared tensors of one set (their storage, and so the learner's view, stays)."""
    fresh_args, fresh_kwargs = make_set(generator)
    for old, new in zip(list(target) + list(kwargs.values()), list(fresh_args) + list(fresh_kwargs.values())):
        if isinstance(old, torch.Tensor):
            old.copy_(new)


def _never_written(slots: list[torch.Tensor]) -> int:
    """After the device has finished: the most elements of one slot that still hold poison (no call wrote them)."""
    torch.cuda.synchronize()
    return max(int(guards.is_poison(slot.reshape(-1)).sum()) for slot in slots)


def _probe(slot: torch.Tensor, generator: torch.Generator) -> bool:
    """True when sampled elements of ``slot`` still hold the poison (it was not written in time)."""
    flat = slot.reshape(-1)
    if flat.numel() == 0:
        return False
    index = torch.randint(0, flat.numel(), (min(PROBES, flat.numel()),), device=flat.device, generator=generator)
    return bool(guards.is_poison(flat[index]).any())


def set_bytes(args: list, kwargs: dict, output_like: torch.Tensor) -> int:
    """GPU bytes one input set takes: its tensors and the output slot beside them."""
    tensors = [v for v in list(args) + list(kwargs.values()) if isinstance(v, torch.Tensor)]
    return sum(t.untyped_storage().nbytes() for t in tensors) + output_like.numel() * output_like.element_size()


def sets_for(fastest_call_ms: float | None, one_set_bytes: int, free_bytes: int) -> int:
    """K, the calls of one round: enough that K calls at ``fastest_call_ms`` (the byte model at the
    measured ceiling: no call can be quicker) last `ROUND_MS`; at least `SETS`, at most `MAX_SETS`, and
    no more than `MEMORY_FRACTION` of the free memory holds (never fewer than `SETS`: the exercises
    size their inputs so that `SETS` fit)."""
    if not fastest_call_ms or fastest_call_ms <= 0:
        return SETS
    wanted = -(-ROUND_MS // fastest_call_ms)
    fit = int(free_bytes * MEMORY_FRACTION) // max(1, one_set_bytes)
    return int(max(SETS, min(wanted, MAX_SETS, fit)))


def time_learner(fn, make_set: MakeSet, verify: Callable[..., None], *,
                 output_like: torch.Tensor, sets: int | None = None, rounds: int = ROUNDS, seed: int = 0,
                 timeout: float = 120.0, snapshot: Callable[[list, dict], Any] | None = None,
                 fastest_call_ms: float | None = None) -> Timing:
    """Time the learner function ``fn`` (a `grader.judge.learner_process.LearnerFunction`) by the judge's
    clock. ``make_set(generator)`` returns one input set ``(args, kwargs)`` on the GPU;
    ``verify(out, args, kwargs)`` raises GradeFailure when an output is wrong; ``output_like`` is
    the shape and dtype of the (first) output. For a function that overwrites its inputs (exercise 10
    writes its gradient into the logits), ``snapshot(args, kwargs)`` is taken from every set before
    the clock starts, and ``verify(out, args, kwargs, state)`` receives it. ``sets`` fixes K; without it
    K is `sets_for` ``fastest_call_ms`` (the call's minimum bytes at the ceiling), or `SETS`."""
    process = fn.process
    process.ready()
    twin = getattr(process, "twin", None)
    generator = torch.Generator(device="cuda")
    generator.manual_seed(seed)
    inputs = [make_set(generator)]
    if sets is None:
        torch.cuda.synchronize()
        # The free memory of the card the course plans for: an emulated smaller card (GRADE_DEVICE_MEMORY_GIB)
        # holds this process to its share, which the driver's free memory knows nothing of.
        free = device.free_bytes(device.current())
        sets = sets_for(fastest_call_ms, set_bytes(*inputs[0], output_like), free)
    inputs += [make_set(generator) for _ in range(sets - 1)]
    slots = [torch.empty_like(output_like, memory_format=torch.contiguous_format) for _ in range(sets)]
    probe_generator = torch.Generator(device="cuda")
    probe_generator.manual_seed(seed + 1)
    torch.cuda.synchronize()
    setup = {"op": "timing_setup", "function": fn.__name__,
             "sets": [{"args": protocol.encode_shared(list(args)), "kwargs": protocol.encode_shared(dict(kwargs))}
                      for args, kwargs in inputs],
             "outputs": [protocol.encode_shared(slot) for slot in slots]}
    process.request(setup, timeout=timeout)
    if twin is not None:
        try:
            twin.ready()
            # The twin writes one element of the first output: it opens that slot and nothing else.
            twin.request({**setup, "sets": [], "outputs": setup["outputs"][:1], "twin": True}, timeout=timeout)
        except GradeFailure:
            twin = None
    raw: list[float] = []
    twin_rounds: list[float] = []
    copied = False
    kernels = None
    trace: dict = {}
    notes: list[str] = []
    states: list = [None] * sets

    def one_round(target, message) -> tuple[float, dict]:
        for i, (args, kwargs) in enumerate(inputs):
            _refill(args, kwargs, make_set, generator)
            if snapshot is not None and not message.get("twin"):
                states[i] = snapshot(args, kwargs)
        for slot in slots:
            guards.fill_poison(slot)
        torch.cuda.synchronize()
        started = time.perf_counter()
        reply = target.request(message, timeout=timeout)
        return time.perf_counter() - started, reply

    try:
        for round_ in range(WARM_UP_ROUNDS + rounds):  # the warm-up rounds (WARM_UP_ROUNDS) are not counted
            counted = round_ >= WARM_UP_ROUNDS
            if round_ == 1:
                # Every counted round traced, and the round before them: the first round may compile and
                # autotune (an autotuner's benchmark clears the L2 with a torch kernel of its own).
                trace = process.request({"op": "timing_trace_start"}, timeout=timeout)
            if twin is not None:  # in turns with the learner's rounds: the same state of the card for both
                twin_elapsed, _ = one_round(twin, {"op": "timing_go", "twin": True})
                if counted:
                    twin_rounds.append(twin_elapsed * 1000)
            elapsed, reply = one_round(process, {"op": "timing_go"})
            # Poison right after "done" is an output the function left unfinished, unless the poison is still
            # there once the GPU has finished everything: then nothing ever wrote it.
            if any(_probe(slot, probe_generator) for slot in slots):
                unwritten = _never_written(slots)
                if unwritten:
                    raise GradeFailure(
                        f"at the size the grader times, your function never wrote {unwritten:,} of the "
                        f"{slots[0].numel():,} elements of `out`: does the grid cover the whole output, and does "
                        "each program start at its own block (`pid * BLOCK`)?")
                raise GradeFailure(
                    "your function returned before its output was written: when the grader looked, right after "
                    "your process said it was done, parts of `out` still held the grader's poison. Is the work "
                    "on another CUDA stream, or in a thread, that nobody waits for?")
            torch.cuda.synchronize()
            for (args, kwargs), slot, state in zip(inputs, slots, states):
                if snapshot is not None:
                    verify(slot, args, kwargs, state)
                else:
                    verify(slot, args, kwargs)
            copied = copied or any(bool(c) for c in reply.get("copied") or [])
            if counted:
                raw.append(elapsed * 1000)
        kernels = process.request({"op": "timing_trace_stop"}, timeout=timeout).get("kernels")
        if not trace.get("started") and device.current().vendor == "AMD":
            # ROCm's torch may have no activity tracer: the verdict stands, and says what it could not check.
            notes.append("the kernels of the timed calls could not be traced on this card "
                         f"({trace.get('why') or 'no tracer'}): the verdict takes them to be your own")
        else:
            failure = kernel_audit.audit(kernels if isinstance(kernels, dict) else None,
                                         kernel_audit.jit_kernel_names(process.learner_file), rounds * sets,
                                         copied=copied)
            if failure is not None:
                raise failure
        dobench = None
        try:
            dobench = float(process.request({"op": "timing_dobench", "rep_ms": 100}, timeout=timeout).get("ms"))
        except GradeFailure:
            dobench = None
        # The twin's quickest round: what a round costs with (almost) no work in it.
        overhead = min(twin_rounds) if twin is not None and twin_rounds else 0.0
    finally:
        for target in (process, twin):
            if target is None:
                continue
            try:
                target.request({"op": "timing_release"}, timeout=30)
            except GradeFailure:
                pass
        del inputs, slots
        # Shared blocks the learner's process (and the twin) opened wait in torch's IPC limbo until
        # collected: without this the judge's next timing (exercise 9 times its forward, then its
        # backward) saw a fraction of the free memory, and sized its rounds for it.
        torch.cuda.ipc_collect()
        torch.cuda.empty_cache()
    times, overhead, note = per_call_ms(raw, overhead, sets, fastest_call_ms=fastest_call_ms, dobench_ms=dobench)
    if note:
        notes.append(note)
    return Timing(ms=statistics.median(times), rounds_ms=times, sets=sets, overhead_ms=overhead, dobench_ms=dobench,
                  copied=copied, raw_rounds_ms=raw, twin_rounds_ms=twin_rounds, kernels=kernels, notes=notes)


#: How much quicker than do_bench (in the learner's process) the clock may read a call before the twin's
#: subtraction is distrusted: in 55 of the 56 gradings on record the clock read at most 1.05 times quicker
#: (``dobench_ratio`` in docs/measurements/), and in the 56th, the one that broke physics, 4.6 times
#: (``grid_stride_loop`` of h100-class-rank-noise.json: twin rounds of 6-40 ms beside calls' rounds of 7.7).
DOBENCH_RATIO_TRUSTED = 1.2


def per_call_ms(raw_rounds_ms: list[float], overhead_ms: float, sets: int, *, fastest_call_ms: float | None = None,
                dobench_ms: float | None = None) -> tuple[list[float], float, str | None]:
    """Each round's time per call with the twin's quickest round (``overhead_ms``) taken off, the overhead
    that was taken off, and a sentence when none could be.

    The twin's rounds estimate what a round costs without the learner's work; when they measured something
    else, taking them off makes the calls look faster than they are. On an H100, twin rounds as long as the
    learner's gave one file in eight of a class a time of zero (and a division by it), and twin rounds of 6
    to 40 ms gave another 443% of the ceiling. So nothing is subtracted when the twin's quickest round is as
    long as the learner's median one, when what is left is quicker than the memory can move the call's bytes
    (``fastest_call_ms``, by more than the measurement-error margin), or when it is more than
    `DOBENCH_RATIO_TRUSTED` times quicker than do_bench timed the same calls (``dobench_ms``). Subtracting
    nothing can only make the calls look slower, so a file cannot gain from making these guards fire."""
    from grader import bandwidth

    median = statistics.median(raw_rounds_ms)
    subtracted = max(median - overhead_ms, 0.0) / sets
    why = None
    if overhead_ms and overhead_ms >= median:
        why = f"as long as your calls' rounds ({median:.2f} ms)"
    elif overhead_ms and fastest_call_ms and subtracted * bandwidth.MEASUREMENT_ERROR_FRACTION < fastest_call_ms <= \
            median / sets * bandwidth.MEASUREMENT_ERROR_FRACTION:
        why = (f"and taken off your rounds ({median:.2f} ms) it left calls quicker than the memory can move their bytes "
               f"({subtracted:.3f} ms per call, where the ceiling allows {fastest_call_ms:.3f} ms)")
    elif overhead_ms and dobench_ms and subtracted * DOBENCH_RATIO_TRUSTED < dobench_ms:
        why = (f"and taken off your rounds ({median:.2f} ms) it left calls {dobench_ms / subtracted:.1f} times quicker "
               f"than do_bench timed them in your process")
    if why is None:
        return [max(t - overhead_ms, 0.0) / sets for t in raw_rounds_ms], overhead_ms, None
    note = (f"the clock's twin took {overhead_ms:.2f} ms for its quickest round, {why}: it measured something else "
            "than a round's own cost, so nothing was subtracted (your calls can only look slower for it)")
    return [t / sets for t in raw_rounds_ms], 0.0, note


def time_local(fn: Callable, make_set: MakeSet, *, sets: int = SETS, rounds: int = ROUNDS, seed: int = 0) -> Timing:
    """The same clock around a function of the judge's own (a peer such as PyTorch's SDPA), so
    learner and peer are timed the same way."""
    generator = torch.Generator(device="cuda")
    generator.manual_seed(seed)
    inputs = [make_set(generator) for _ in range(sets)]
    times: list[float] = []
    for round_ in range(rounds + 1):
        for args, kwargs in inputs:
            _refill(args, kwargs, make_set, generator)
        torch.cuda.synchronize()
        started = time.perf_counter()
        for args, kwargs in inputs:
            fn(*args, **kwargs)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - started
        if round_:
            times.append(elapsed * 1000 / sets)
    del inputs
    torch.cuda.empty_cache()
    return Timing(ms=statistics.median(times), rounds_ms=times, sets=sets)
