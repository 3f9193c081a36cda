"""What one exercise grades on one card: the dtypes, the timed input and how the floor is worded.

`for_exercise(exercise, device)` is the plan. The exercise says what it can grade (the manifest's
``dtypes``) and how large its timed input is for a card (its spec's ``performance_input(device,
free_bytes)``, which returns a `PerformanceInput`); this module applies what holds for every exercise:

* a dtype the card does not compute natively is skipped with a sentence, never failed (bfloat16 on a
  T4, sm_75); a timed input in bfloat16 is timed in float16 there (`half_dtype`: the same bytes);
* the timed input must fit the card, and should span several times its last-level cache: on a card
  whose memory allows less, the floor's wording says the fraction may include cache hits
  (`floor_note`); so it does where the input sets the card holds cross its memory in less than the
  round the judge's clock was built for (an H200 held to 8 GiB: about 1 ms, where a real 8 GB card
  takes over 10);
* without a GPU nothing is timed.

The same plan is what the grader uses on a GPU (the specs' performance checks call their own
``performance_input``) and what the tests check for faked cards (tests/test_devices.py).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from grader.device import GiB, MiB, Device, elements_for_cache  # noqa: F401 (the specs ask plan)

#: The dtypes an exercise may grade, by the names the manifests and the reports use.
DTYPE_NAMES = ("fp32", "fp16", "bf16")
#: A timed input that spans fewer last-level caches than this is not what the floors were set on: the
#: time then also holds the cache and the launch (exercise 1's solution on the H200: 87% of the ceiling
#: at 3.2 L2 sizes, 100% at 51; docs/measurements/h200-ex01-vector-add.json).
HONEST_CACHE_MULTIPLE = 3.0
#: What a fresh process finds free on a card: the CUDA context, the allocator's pool and the display
#: (on a desktop card) take about this much (the faked cards of the tests plan with it).
CONTEXT_BYTES = 1 * GiB


@dataclass(frozen=True)
class PerformanceInput:
    """The input the performance check times on one card."""

    label: str  # as the report shows it: "n = 251,658,240 fp32"
    dtype: str  # "fp32", "fp16" or "bf16"
    data_bytes: int  # the bytes one call reads and writes at least (the byte model)
    held_bytes: int  # the most the check holds on the card at once: every input set and its comparison
    sizes: dict  # the spec's dimensions, by name
    cache_bound: bool = True  # graded in GB/s against the copy ceiling (not throughput against a library)


@dataclass(frozen=True)
class Plan:
    number: int
    device: Device
    dtypes: tuple[str, ...]  # graded
    skipped: tuple[tuple[str, str], ...]  # (dtype, the sentence that says why)
    performance: PerformanceInput | None
    floor_note: str | None  # how the floor reads on this card, where it differs from a large one

    def skip_reason(self, dtype: str) -> str | None:
        return dict(self.skipped).get(dtype)


def no_native(dtype: str, device: Device) -> str:
    """The sentence a check in ``dtype`` is skipped with on a card that does not compute it natively."""
    return (f"{dtype}: not graded on this {device.name} ({device.architecture}), which has no native {dtype} "
            "arithmetic: your kernel is graded in the other dtypes; a card from sm_80 (A100, RTX 30) on grades it")


def half_dtype(device: Device) -> str:
    """The 16-bit dtype a timed input uses: bfloat16, or float16 (the same bytes) on a card without it."""
    return "bf16" if "bf16" in device.native_dtypes else "fp16"


def torch_dtype(name: str):
    import torch

    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def planning_memory(device: Device) -> int:
    """The free memory a plan for a card it is not running on assumes: the card less a context."""
    return max(0, device.memory_bytes - CONTEXT_BYTES)


def floor_note(device: Device, data_bytes: int | None, *, cache_bound: bool = True, round_bytes: int | None = None,
               gbps: float | None = None) -> str | None:
    """The floor's wording on a card too small to measure honestly (``data_bytes``: what one timed call
    reads and writes at least): its memory cannot hold an input several caches large, or the input sets
    it holds (``round_bytes``: what one round of the judge's clock moves, at most) cross its memory in less
    than the round the clock was built for, at ``gbps`` (the card's ceiling or datasheet peak)."""
    if data_bytes is None or not cache_bound or not device.gpu:
        return None
    multiple = data_bytes / max(1, device.cache_bytes)
    if multiple < HONEST_CACHE_MULTIPLE:
        return (f"on this {device.name} the timed input ({data_bytes / MiB:,.0f} MiB) is only {multiple:.1f} times "
                f"its {device.cache_bytes / MiB:.0f} MiB cache, all its memory allows: the floor was set on inputs many "
                "caches large, so here the fraction also holds the cache and the launch, and a verdict is weaker "
                "evidence than on a larger card")
    round_ms = shortest_round_ms(round_bytes, gbps)
    if round_ms is None:
        return None
    from grader.judge import clock

    # Half the round, not the round: a card that holds every set the clock asks for crosses them in about
    # ROUND_MS by construction (`clock.sets_for`), and rounding must not give a full H200 the note; the cards
    # that need it are far below (an H200 held to 8 GiB: 1.2 ms at most).
    if round_ms >= clock.ROUND_MS / 2:
        return None
    return (f"on this {device.name} the input sets its memory holds move in {round_ms:.1f} ms at "
            f"{gbps:,.0f} GB/s, where the judge's clock was built for rounds of at least {clock.ROUND_MS:.0f} ms: a "
            "round's fixed cost (its first launch) then weighs several percent of the time, and a verdict is weaker "
            "evidence than on a card whose memory takes longer to cross")


def shortest_round_ms(round_bytes: int | None, gbps: float | None) -> float | None:
    """How long ``round_bytes`` take at ``gbps``: the shortest a round of the judge's clock can last."""
    if not round_bytes or not gbps:
        return None
    return round_bytes / (gbps * 1e9) * 1e3


def spec_of(exercise):
    """The exercise's spec module (imports torch and pytest)."""
    return importlib.import_module(exercise.spec_module)


def for_exercise(exercise, device: Device, free_bytes: int | None = None) -> Plan:
    """The plan of ``exercise`` on ``device``; ``free_bytes`` is what the card has free now (default:
    `planning_memory`)."""
    skipped = tuple((d, no_native(d, device)) for d in exercise.dtypes if device.gpu and d not in device.native_dtypes)
    graded = tuple(d for d in exercise.dtypes if d not in dict(skipped))
    timed = None
    if device.gpu:
        hook = getattr(spec_of(exercise), "performance_input", None)
        if hook is not None:
            timed = hook(device, planning_memory(device) if free_bytes is None else free_bytes)
    return Plan(number=exercise.number, device=device, dtypes=graded, skipped=skipped, performance=timed,
                floor_note=None if timed is None else floor_note(device, timed.data_bytes, cache_bound=timed.cache_bound,
                                                                  round_bytes=timed.held_bytes, gbps=device.peak_gbps))


def timed_sets_bytes(set_bytes: int, free_bytes: int) -> int:
    """The most the judge's input sets take (`grader.judge.clock.sets_for` at its largest K)."""
    from grader.judge import clock

    return clock.sets_for(1e-9, set_bytes, free_bytes) * set_bytes


def current_device() -> Device:
    """This process's card (`grader.device.current`), for a spec whose checks take a ``device`` fixture."""
    from grader import device

    return device.current()


def here(spec_file: str) -> tuple[Device, PerformanceInput]:
    """For a spec's performance check: this GPU and the input its plan times now."""
    from grader import catalogue, device

    card = device.current()
    return card, spec_of(catalogue.of_spec(spec_file)).performance_input(card, device.free_bytes(card))
