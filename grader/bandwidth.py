"""Timing, the bandwidth ceiling of this GPU, and the fraction a kernel reaches.

Honest numbers need four things, and this module does each once:

* a median over many runs with the L2 flushed between them (`time_ms`, through
  `triton.testing.do_bench`, which zeroes a 256 MB buffer before every run; `time_ms_clean_l2`
  flushes by reading instead, for kernels small enough that the dirty lines of a write flush show);
* inputs several times the L2 size, so HBM is measured and not the cache (`sized_for_hbm`);
* a ceiling measured on *this* GPU rather than a datasheet number (`measure_ceiling`);
* the datasheet number beside it anyway, so the learner sees both (`spec_peak_gbps`).

Why the ceiling is the better of a copy and an add: on the H200 a device-to-device copy
(one read, one write) moved 4272 GB/s while a 2-read/1-write add moved 4364 GB/s (2% more;
HBM turns around between reads and writes less often). A ceiling from the copy alone would
put a perfect vector add at 102%. And why torch's add is enough, with no Triton kernel of the grader's
own beside it: a plain Triton add of the same buffers moves the same bytes per second (within 0.1% on an
H100, docs/measurements/h100-ceiling-probe.json; 4364 GB/s both on the H200,
h200-baselines-2026-11-30.json), so a correct file above the ceiling was mis-timed.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import torch

GB = 1e9  # bandwidths are in decimal GB/s, as vendors quote them
MiB = 1 << 20

#: Above this fraction of the ceiling a result is a measurement error, not a pass.
#: 3% leaves room for run-to-run noise (two runs of the same kernel on the H200 differed by <1%).
MEASUREMENT_ERROR_FRACTION = 1.03


@dataclass
class GpuInfo:
    name: str
    driver: str
    sm_count: int
    l2_bytes: int
    total_bytes: int
    capability: str


def gpu_info() -> GpuInfo:
    """This GPU as the timing code reads it, from the device model (`grader.device`)."""
    from grader import device

    card = device.current()
    return GpuInfo(name=card.name, driver=card.driver, sm_count=card.multiprocessors, l2_bytes=card.cache_bytes,
                   total_bytes=card.memory_bytes, capability=card.architecture)


def spec_peak_gbps() -> float | None:
    """Datasheet peak where the vendor's library gives it (`grader.device.read_nvml`); None elsewhere."""
    from grader import device

    return device.current().peak_gbps


def time_ms(fn: Callable[[], object], *, warmup_ms: int = 25, rep_ms: int = 100) -> float:
    """Median time of ``fn()`` in milliseconds, L2 flushed before each run (CUDA events)."""
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))


def _read_flush_buffer() -> torch.Tensor:
    """What a read flush reads: four L2 sizes of random float32 (``l2_bytes`` elements of 4 bytes). Reading
    it evicts the L2 and, unlike a written flush, leaves no dirty line behind."""
    flush = torch.empty(gpu_info().l2_bytes, dtype=torch.float32, device="cuda")
    flush.normal_()
    return flush


def time_ms_clean_l2(fn: Callable[[], object], *, reps: int = 60, warmup: int = 5) -> float:
    """Median time of ``fn()`` in milliseconds after an L2 flush that leaves no dirty line behind.

    `time_ms`'s flush *writes* 256 MB: the L2 is write-back, so it ends full of dirty lines, and the
    timed kernel pays to write them to HBM as its own reads evict them. On a kernel of a few hundred
    MB that is a visible share (a plain read of the same bytes after each flush: the
    ``read-same-bytes-graph`` and ``read-same-bytes-graph-clean-l2`` rows of
    docs/measurements/h200-ex08-decode.json). Here the flush reads a buffer of four L2 sizes, as the
    weight reads before an attention kernel would.
    """
    flush = _read_flush_buffer()
    for _ in range(warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        flush.sum()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in zip(starts, ends))


def time_ms_in_graph(fn: Callable[[], object], *, steps: int = 16, reps: int = 12) -> float:
    """Time of ``fn()`` in milliseconds as one node among many of a CUDA graph, each run after a read flush.

    Two graphs are captured: ``steps`` times (read flush, ``fn``), and ``steps`` read flushes alone.
    Their replays are timed in turns; the difference of the medians over ``steps`` is what ``fn``
    adds to a step of a server that replays its whole decode step from one graph: its kernels and
    the boundaries between them, without the graph's own launch and the timing events, which
    `time_ms_clean_l2` charges to every call (an empty kernel timed that way takes 3 to 4 µs on the
    H200, a tenth of a 134 MB decode step, and about 1 µs timed this way: the ``empty-triton`` and
    ``empty`` rows of docs/measurements/h200-ex08-decode-configs.json). ``fn``'s tensors must live outside it or be
    allocated in it (they then come from the graph's private pool).
    """
    flush = _read_flush_buffer()
    sink = torch.empty((), dtype=torch.float32, device="cuda")
    fn()
    torch.cuda.synchronize()
    with_fn, flushes_only = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(with_fn):
        for _ in range(steps):
            torch.sum(flush, dim=0, out=sink)
            fn()
    with torch.cuda.graph(flushes_only):
        for _ in range(steps):
            torch.sum(flush, dim=0, out=sink)
    runs: dict[str, list[float]] = {"with": [], "alone": []}
    for _ in range(reps + 1):  # the first replay of each warms up and is dropped
        for name, graph in (("with", with_fn), ("alone", flushes_only)):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            runs[name].append(start.elapsed_time(end))
    return (statistics.median(runs["with"][1:]) - statistics.median(runs["alone"][1:])) / steps


def time_in_turns(kernels: dict[str, Callable[[], object]], *, rounds: int = 2,
                  rep_ms: int = 100) -> dict[str, list[float]]:
    """``rounds`` medians of each kernel (`time_ms`), taken in turns: a, b, a, b, ...

    For tensor-core-bound kernels the card's power state moves the answer: cuDNN's attention holds
    an H200 at its 700 W cap, its clock falls from 1980 to 1530 MHz, and SDPA's median went from
    631 TFLOP/s on an idle card to 532-567 once warm, while exercise 7's solution read 454-470 in
    every round but one, which fell to 416 (the ``drift`` rows of
    docs/measurements/h200-ex07-attention-variants.json). Timing one kernel
    after the other credits whichever ran on the cooler card; turns give every kernel the same states.
    """
    runs: dict[str, list[float]] = {name: [] for name in kernels}
    for _ in range(rounds):
        for name, fn in kernels.items():
            runs[name].append(time_ms(fn, rep_ms=rep_ms))
    return runs


def graphed(fn: Callable[[], object]) -> Callable[[], None]:
    """``fn``'s kernels captured once in a CUDA graph: the returned function replays them with no Python
    launcher in between (its inputs are the tensors ``fn`` closes over, read again at every replay).

    Timing the replay separates what the kernels cost from what launching them from Python costs: for
    a kernel of a few tens of µs, Triton's launcher can take longer than the kernel itself."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    torch.cuda.synchronize()
    return graph.replay


def host_us(fn: Callable[[], object], calls: int = 200) -> float:
    """CPU time of one call, in µs: ``calls`` calls queued back to back, before waiting for the GPU.

    When it exceeds the kernels' own time, the GPU waits for the launcher and the timing measures Python."""
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - started
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def gbps(nbytes: int, ms: float) -> float:
    """Achieved bandwidth: bytes / time, in GB/s."""
    return nbytes / (ms * 1e-3) / GB


def sized_for_hbm(bytes_per_element_set: int, *, l2_multiple: int = 8, budget_fraction: float = 0.5) -> int:
    """How many elements make the data at least ``l2_multiple`` times the L2 size.

    ``bytes_per_element_set`` is the bytes one element costs across every tensor the kernel
    touches (4 + 4 + 4 for an fp32 vector add). Capped so everything fits in ``budget_fraction``
    of free memory; on a small laptop GPU the input is then smaller than eight L2s, and the
    report says so through the returned size.
    """
    from grader import device

    card = device.current()
    return device.elements_for_cache(bytes_per_element_set, card.cache_bytes, device.free_bytes(card),
                                   l2_multiple=l2_multiple, budget_fraction=budget_fraction)


# --- the ceiling -------------------------------------------------------------------------

@dataclass
class Ceiling:
    gpu: str
    driver: str
    ceiling_gbps: float
    copy_gbps: float
    add_gbps: float
    buffer_bytes: int
    measured_at: str
    torch: str

    def key(self) -> str:
        return cache_key(self.gpu, self.driver)


def cache_key(gpu: str, driver: str) -> str:
    return f"{gpu} | driver {driver}"


def cache_path() -> Path:
    """Where measured ceilings are kept: the user cache dir, or $GRADE_CACHE_DIR."""
    override = os.environ.get("GRADE_CACHE_DIR")
    if override:
        return Path(override) / "ceilings.json"
    import platformdirs

    return Path(platformdirs.user_cache_dir("triton-memory-course")) / "ceilings.json"


def load_cached(gpu: str, driver: str) -> Ceiling | None:
    try:
        data = json.loads(cache_path().read_text())
        return Ceiling(**data[cache_key(gpu, driver)])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_cached(ceiling: Ceiling) -> None:
    path = cache_path()
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[ceiling.key()] = asdict(ceiling)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)  # atomic: an interrupted run never leaves half a file


def measure_ceiling(*, refresh: bool = False) -> tuple[Ceiling, bool]:
    """The bandwidth ceiling of this GPU and whether it came from the cache.

    Measures a device-to-device copy and a 2-read/1-write add on buffers of at least
    16x the L2 each (`sized_for_hbm(12, l2_multiple=16)`: 960 MiB each on the H200's
    60 MiB), median of many runs, and keeps the better one.
    """
    info = gpu_info()
    if not refresh:
        cached = load_cached(info.name, info.driver)
        if cached is not None:
            return cached, True
    elements = sized_for_hbm(3 * 4, l2_multiple=16)
    a = torch.randn(elements, device="cuda")
    b = torch.randn(elements, device="cuda")
    c = torch.empty_like(a)
    copy_ms = time_ms(lambda: c.copy_(a), rep_ms=200)
    add_ms = time_ms(lambda: torch.add(a, b, out=c), rep_ms=200)
    nbytes = elements * 4
    copy = gbps(2 * nbytes, copy_ms)
    add = gbps(3 * nbytes, add_ms)
    del a, b, c
    ceiling = Ceiling(
        gpu=info.name,
        driver=info.driver,
        ceiling_gbps=max(copy, add),
        copy_gbps=copy,
        add_gbps=add,
        buffer_bytes=nbytes,
        measured_at=time.strftime("%Y-%m-%d %H:%M:%S"),
        torch=torch.__version__,
    )
    store_cached(ceiling)
    return ceiling, False


#: How far one grading's fraction moves from the next with the same kernel: five gradings of exercise 1's
#: solution on the H200 spanned 2.9 points, three of exercise 2's 4.7 (docs/measurements/
#: h200-grading-speed.json, h200-noise rows); on an H100, five of each of six solutions 1.8 to 4.4 points where the
#: twin measured the round's own cost, and since the twin started no CUPTI, five of exercises 3 and 4 spanned 2.3 and
#: 2.8 (h100-verdict-spread.json). A verdict this close to its floor says so: it is not flipped.
GRADING_NOISE = 0.05


def fraction_verdict(fraction: float, floor: float) -> tuple[bool, str]:
    """Pass/fail and a sentence for a measured fraction of the ceiling."""
    if fraction > MEASUREMENT_ERROR_FRACTION:
        return False, (
            f"{fraction:.0%} of the ceiling is more than the memory can deliver: this is a "
            "measurement error (is the byte model counting bytes the kernel does not move, or "
            "is the input small enough to stay in L2?), not a pass"
        )
    near = abs(fraction - floor) < GRADING_NOISE
    noise = (f"within {GRADING_NOISE * 100:.0f} points of the floor, as far as one grading of the same kernel "
             "moved from the next on the H200")
    if fraction >= floor:
        return True, f"{fraction:.0%} of the ceiling (floor {floor:.0%})" + (
            f"; {noise}: another grading may fall below it" if near else "")
    return False, f"{fraction:.0%} of the ceiling, below the floor of {floor:.0%}" + (
        f", {noise}: another grading may pass, a faster kernel will" if near else "")


def card_verdict(fraction: float, floor: float, note: str | None) -> tuple[bool, str, bool]:
    """Pass/fail, a sentence, and whether the floor decided it, for a fraction measured on a card whose plan
    may say (``note``, `grader.plan.floor_note`) that it cannot measure the floor honestly: there a fraction
    under the floor is reported and not failed, since the card, not the kernel, may be what held it back (an
    H200 held to 8 GiB crosses the input sets its memory holds in under a millisecond, so a round's first
    launch, or a launcher slower than its kernel, weighs in the time: docs/measurements/h200-small-card.json).
    A fraction above what memory delivers is an error on every card."""
    passed, verdict = fraction_verdict(fraction, floor)
    if passed or note is None or fraction > MEASUREMENT_ERROR_FRACTION:
        return passed, verdict, True
    return True, (f"{fraction:.0%} of the ceiling against a floor of {floor:.0%}: not decided on this card, which "
                  "cannot measure the floor honestly (the note below says why); a card whose memory takes longer "
                  "to cross decides it"), False


def median(values: list[float]) -> float:
    return statistics.median(values)
