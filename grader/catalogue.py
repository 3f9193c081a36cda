"""The one catalogue of exercises.

The CLI (`grade list`, `grade exercise N`, `grade hint N`), the course's own tests and the
site all read this list, so adding an exercise means adding one entry here plus its spec
(`grader/specs/`), stub (`exercises/`), solution (`solutions/`) and docs page.

Floors are fractions of the bandwidth ceiling measured on the learner's own GPU
(see `grader.perf`). Each one carries the measurement that justifies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The repository root: exercises/, solutions/, docs/ and grader/ live here.
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Exercise:
    """One exercise: where its files are, how it is introduced and how it is graded."""

    number: int
    slug: str
    title: str
    #: The learner-facing function the file must define, e.g. ``"add"``.
    function: str
    #: Paths relative to the repository root.
    learner_file: str
    solution_file: str
    #: Path relative to docs/.
    docs_page: str
    #: Hints in tiers: ``grade hint N`` shows the next one each time.
    hints: tuple[str, ...]
    #: Minimum fraction of the measured bandwidth ceiling on a GPU (None: not a bandwidth exercise).
    floor: float | None
    #: Why the floor is where it is, with the measurement behind it.
    floor_reason: str

    @property
    def spec_module(self) -> str:
        """Dotted name of the pytest module holding this exercise's checks."""
        return f"grader.specs.ex{self.number:02d}_{self.slug}"

    @property
    def spec_file(self) -> Path:
        return ROOT / "grader" / "specs" / f"ex{self.number:02d}_{self.slug}.py"

    @property
    def learner_path(self) -> Path:
        return ROOT / self.learner_file

    @property
    def solution_path(self) -> Path:
        return ROOT / self.solution_file


def _files(number: int, slug: str) -> dict[str, str]:
    stem = f"ex{number:02d}_{slug}"
    return {
        "learner_file": f"exercises/{stem}.py",
        "solution_file": f"solutions/{stem}.py",
        "docs_page": f"exercises/{stem}.md",
    }


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        number=1,
        slug="vector_add",
        title="Vector add: the tail mask and the byte model",
        function="add",
        hints=(
            "Each program handles BLOCK_SIZE consecutive elements: its first index is "
            "`tl.program_id(0) * BLOCK_SIZE`, and `tl.arange(0, BLOCK_SIZE)` gives the offsets.",
            "n is rarely a multiple of BLOCK_SIZE. Build `mask = offsets < n_elements` and pass it "
            "to every `tl.load` and to the `tl.store`, or the last program reads and writes past the end.",
            "The grid needs ceil(n / BLOCK_SIZE) programs: `grid = (triton.cdiv(n, BLOCK_SIZE),)`, "
            "then `add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)`.",
        ),
        floor=0.80,
        floor_reason=(
            "Provisional until calibrated on the H200: a plain Triton vector add reached 4364 GB/s "
            "there, the same as torch.add (CEO baseline, Triton 3.6)."
        ),
        **_files(1, "vector_add"),
    ),
    Exercise(
        number=2,
        slug="bias_gelu",
        title="Kernel fusion: bias + GELU in one pass",
        function="bias_gelu",
        hints=(),
        floor=None,
        floor_reason="",
        **_files(2, "bias_gelu"),
    ),
    Exercise(
        number=3,
        slug="softmax",
        title="Fused softmax: one read, one write",
        function="softmax",
        hints=(),
        floor=None,
        floor_reason="",
        **_files(3, "softmax"),
    ),
    Exercise(
        number=4,
        slug="softmax_persistent",
        title="Persistent softmax: a grid sized by occupancy",
        function="softmax_persistent",
        hints=(),
        floor=None,
        floor_reason="",
        **_files(4, "softmax_persistent"),
    ),
    Exercise(
        number=5,
        slug="online_softmax",
        title="Online softmax: rows longer than a block",
        function="softmax_online",
        hints=(),
        floor=None,
        floor_reason="",
        **_files(5, "online_softmax"),
    ),
    Exercise(
        number=6,
        slug="amdahl",
        title="Amdahl's Law: profile, predict, then measure",
        function="predict_speedup",
        hints=(),
        floor=None,
        floor_reason="",
        **_files(6, "amdahl"),
    ),
    Exercise(
        number=7,
        slug="flash_attention",
        title="FlashAttention forward: tiles, online softmax, masks",
        function="attention",
        hints=(),
        floor=None,
        floor_reason="",
        **_files(7, "flash_attention"),
    ),
)


def get(number: int) -> Exercise:
    """The exercise with this number; KeyError with the valid range otherwise."""
    for exercise in EXERCISES:
        if exercise.number == number:
            return exercise
    raise KeyError(f"there is no exercise {number}: the course has exercises 1 to {len(EXERCISES)}")
