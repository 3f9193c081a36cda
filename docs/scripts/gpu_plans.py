"""The tables of docs/gpus.md, rendered from the plans (`grader.plan`) of the cards `grader.known_cards`
describes, so the page says what the grader does on each card and cannot disagree with it."""

from __future__ import annotations

from grader import catalogue, known_cards, plan

GiB, MiB = 1 << 30, 1 << 20


def _exercises(numbers: list[int]) -> str:
    if not numbers:
        return "none"
    return ", ".join(str(n) for n in numbers)


def card_table() -> str:
    """One row per card: what the grader reads from it and what it grades there."""
    rows = ["| card | architecture | multiprocessors | memory | cache the inputs are sized past | dtypes graded | "
            "bf16 checks skipped in exercises |",
            "|---|---|---|---|---|---|---|"]
    for name in known_cards.CARDS:
        d = known_cards.card(name)
        skipped = [e.number for e in catalogue.EXERCISES if plan.for_exercise(e, d).skip_reason("bf16")]
        rows.append(f"| {name} | {d.vendor} {d.architecture} | {d.multiprocessors} {d.multiprocessor_word}, "
                    f"warp {d.warp_size} | {d.memory_bytes / GiB:.0f} GiB | {d.cache_bytes / MiB:.0f} MiB | "
                    f"{', '.join(d.native_dtypes)} | {_exercises(skipped)} |")
    return "\n".join(rows)


def input_table() -> str:
    """One row per exercise with a timed input: the input each card times (as the report labels it)."""
    names = list(known_cards.CARDS)
    rows = ["| exercise | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for exercise in catalogue.EXERCISES:
        cells = []
        for name in names:
            p = plan.for_exercise(exercise, known_cards.card(name))
            timed = p.performance
            if timed is None:
                cells.append("not timed")
                continue
            cells.append(timed.label.replace("|", "/") + (" (floor worded for a small card)" if p.floor_note else ""))
        if set(cells) == {"not timed"}:
            continue
        rows.append(f"| {exercise.number}. {exercise.nav_title} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _and(items: list[str]) -> str:
    """"8, 9 and 10"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def half_timed(name: str, reference: str = "H200") -> str:
    """The exercises whose timed input is bfloat16 on ``reference`` and float16 on card ``name``: "8, 9 and 10"."""
    numbers = []
    for exercise in catalogue.EXERCISES:
        here = plan.for_exercise(exercise, known_cards.card(name)).performance
        there = plan.for_exercise(exercise, known_cards.card(reference)).performance
        if here is not None and there is not None and (there.dtype, here.dtype) == ("bf16", "fp16"):
            numbers.append(str(exercise.number))
    return _and(numbers) if numbers else "none"


def small_card_floors() -> str:
    """Which of the described cards get the small card's floor wording, and in which exercises."""
    found = []
    for name in known_cards.CARDS:
        d = known_cards.card(name)
        numbers = [str(e.number) for e in catalogue.EXERCISES if plan.for_exercise(e, d).floor_note]
        if numbers:
            found.append(f"the {name} in exercise{'s' if len(numbers) > 1 else ''} {_and(numbers)}")
    return _and(found) if found else "none of the cards above"


def context_gib() -> str:
    """The memory a plan leaves to the CUDA context: "1 GiB"."""
    return f"{plan.CONTEXT_BYTES / GiB:g} GiB"


def define_macros(env) -> None:
    """Register `gpu_card_table()`, `gpu_input_table()`, `gpu_half_timed(card)`, `gpu_small_card_floors()` and
    `gpu_context_gib()` (called from docs/scripts/figures.py)."""
    env.macro(card_table, "gpu_card_table")
    env.macro(input_table, "gpu_input_table")
    env.macro(half_timed, "gpu_half_timed")
    env.macro(small_card_floors, "gpu_small_card_floors")
    env.macro(context_gib, "gpu_context_gib")
