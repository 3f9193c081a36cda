"""Guard regions and poison: how the grader sees writes past the end and unwritten outputs.

Every tensor handed to the learner is a view into a larger buffer:

    [ guard | the view (with its row gaps) | guard ]

* Input guards (and gaps between strided rows) hold NaN with payload ``INPUT_GUARD``: a
  kernel that reads them without a mask gets NaN into its answer.
* Outputs are allocated by the learner (``torch.empty_like``); the grader intercepts that
  allocation (see `grader.learner.call_watch`) and hands back a view whose elements hold NaN with payload
  ``POISON`` (so "left K elements unwritten" can be told apart from a computed NaN) and whose
  guards hold a finite ``SENTINEL``.

The interpreter does no bounds checking: an unmasked store writes straight into whatever
memory lies there. With a 64-element guard and a 256-wide block we saw `free(): invalid
pointer` kill the process, so guards are far wider than any plausible block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

#: Elements of guard on each side. 65536 is the widest softmax block (a 128 KiB row of 16-bit values),
#: so an unmasked block on any shorter row ends inside the guard.
GUARD = 1 << 16

_INT_VIEW = {torch.float32: torch.int32, torch.float64: torch.int64,
             torch.float16: torch.int16, torch.bfloat16: torch.int16}

# NaN bit patterns with distinctive payloads (quiet NaNs, so arithmetic keeps them NaN).
_INPUT_GUARD_BITS = {torch.float32: 0x7FC0_6A11, torch.float64: 0x7FF8_0000_0000_6A11,
                     torch.float16: 0x7E11, torch.bfloat16: 0x7FD1}
_POISON_BITS = {torch.float32: 0x7FC0_0BAD, torch.float64: 0x7FF8_0000_0000_0BAD,
                torch.float16: 0x7E0B, torch.bfloat16: 0x7FCB}
#: Output guards hold a finite value no kernel computes by accident.
SENTINEL = -123.456
#: Integer tensors (lengths, indices) get these instead.
INT_INPUT_GUARD = -987_654_321
INT_POISON = -123_456_789


def bits_view(t: torch.Tensor) -> torch.Tensor:
    """The same memory seen as integers, for bitwise comparison (NaN payloads included)."""
    if t.dtype in _INT_VIEW:
        return t.view(_INT_VIEW[t.dtype])
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    return t


def _fill_bits(buf: torch.Tensor, pattern: dict, int_value: int) -> None:
    if buf.dtype in pattern:
        bits = pattern[buf.dtype]
        int_dtype = _INT_VIEW[buf.dtype]
        info = torch.iinfo(int_dtype)
        if bits > info.max:  # two's complement for patterns with the top bit set
            bits -= 1 << info.bits
        buf.view(int_dtype).fill_(bits)
    elif buf.dtype == torch.bool:
        buf.fill_(True)
    else:
        buf.fill_(int_value)


def fill_input_guard(buf: torch.Tensor) -> None:
    _fill_bits(buf, _INPUT_GUARD_BITS, INT_INPUT_GUARD)


def fill_poison(buf: torch.Tensor) -> None:
    _fill_bits(buf, _POISON_BITS, INT_POISON)


def fill_sentinel(buf: torch.Tensor) -> None:
    if buf.dtype.is_floating_point:
        buf.fill_(SENTINEL)
    else:
        buf.fill_(INT_POISON + 1)


def is_poison(t: torch.Tensor) -> torch.Tensor:
    """Boolean mask of elements still holding the output poison (never written)."""
    if t.dtype in _POISON_BITS:
        bits = _POISON_BITS[t.dtype]
        int_dtype = _INT_VIEW[t.dtype]
        info = torch.iinfo(int_dtype)
        if bits > info.max:
            bits -= 1 << info.bits
        return bits_view(t) == bits
    if t.dtype == torch.bool:
        return torch.zeros_like(t, dtype=torch.bool)
    return t == INT_POISON


def extent(shape: tuple[int, ...], stride: tuple[int, ...]) -> int:
    """Elements spanned by a strided view, from its first element to its last (gaps included)."""
    if any(s == 0 for s in shape):
        return 0
    if any(st < 0 for st in stride):
        raise ValueError("negative strides are not supported by the guards")
    return 1 + sum((size - 1) * st for size, st in zip(shape, stride))


@dataclass
class GuardedTensor:
    """A view into a guarded buffer, and what the buffer held when it was handed over."""

    name: str
    role: str  # "input" or "output"
    buffer: torch.Tensor  # 1-D, guard + extent + guard elements
    view: torch.Tensor
    #: Bool over buffer, True where the view's elements are; None for a fresh output (below).
    covered: torch.Tensor | None
    #: Integer copy of the buffer's bits at hand-over; None for a fresh output, whose buffer held the
    #: sentinel around the view: checked in chunks, so that the judge's memory does not grow with an
    #: allocation the learner's process made (one unused 1 GiB `torch.empty` cost the judge 3.3 GiB
    #: when every check built full-size masks and copies).
    snapshot: torch.Tensor | None = field(repr=False)
    #: The device the learner saw the tensor on ("cuda" tensors cross to the learner's process in
    #: host memory and are copied to the GPU there; ``buffer`` is then the host copy).
    device: str = "cpu"

    @property
    def offset(self) -> int:
        return GUARD

    def changed(self) -> torch.Tensor:
        """Bool over the buffer: elements whose bits differ from the hand-over."""
        return bits_view(self.buffer) != self.snapshot

    def outside_writes(self) -> dict[str, int]:
        """Writes outside the view, split into before the start, in the gaps, past the end."""
        if self.snapshot is None or self.covered is None:
            return fresh_output_outside_writes(self.buffer, self.view)
        changed = self.changed() & ~self.covered
        if not bool(changed.any()):
            return {}
        n = self.buffer.numel()
        idx = torch.arange(n, device=changed.device)
        end = n - GUARD
        counts = {
            "before": int((changed & (idx < GUARD)).sum()),
            "gaps": int((changed & (idx >= GUARD) & (idx < end)).sum()),
            "after": int((changed & (idx >= end)).sum()),
        }
        return {k: v for k, v in counts.items() if v}

    def inside_writes(self) -> int:
        return int((self.changed() & self.covered).sum())


#: ``allocate(numel, dtype) -> 1-D tensor``: where guarded buffers live (the judge places them in
#: the memory it shares with the learner's process, `grader.wire.arena`).
Allocate = Callable[[int, torch.dtype], torch.Tensor]


def buffer_numel(shape, stride) -> int:
    """Elements of the guarded buffer around a view of this shape and strides."""
    return GUARD + extent(tuple(shape), tuple(stride)) + GUARD


def covered_mask(buffer_numel_: int, shape, stride, device) -> torch.Tensor:
    """Bool over a guarded buffer: True where the view's elements are."""
    covered = torch.zeros(buffer_numel_, dtype=torch.bool, device=device)
    if extent(tuple(shape), tuple(stride)):
        covered.as_strided(tuple(shape), tuple(stride), GUARD).fill_(True)
    return covered


def view_of(buffer: torch.Tensor, shape, stride) -> torch.Tensor:
    """The guarded view inside ``buffer`` (which may itself be a view into shared memory)."""
    return buffer.as_strided(tuple(shape), tuple(stride), buffer.storage_offset() + GUARD)


def _guarded_buffer(shape, stride, dtype, device, allocate: Allocate | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    numel = buffer_numel(shape, stride)
    if allocate is None or torch.device(device).type != "cpu":
        buffer = torch.empty(numel, dtype=dtype, device=device)
    else:
        buffer = allocate(numel, dtype)
    covered = covered_mask(numel, shape, stride, buffer.device)
    return buffer, view_of(buffer, shape, stride), covered


def guard_input(name: str, value: torch.Tensor, *, allocate: Allocate | None = None) -> GuardedTensor:
    """A copy of ``value`` (same shape and strides) inside a NaN-guarded buffer."""
    device = value.device if allocate is None else torch.device("cpu")
    buffer, view, covered = _guarded_buffer(value.shape, value.stride(), value.dtype, device, allocate)
    fill_input_guard(buffer)
    view.copy_(value)
    return GuardedTensor(name, "input", buffer, view, covered, bits_view(buffer).clone(), device=value.device.type)


def guard_output(name: str, shape, stride, dtype, device, *, allocate: Allocate | None = None) -> GuardedTensor:
    """A fresh output: elements poisoned with NaN, guards and gaps holding the sentinel."""
    numel = buffer_numel(shape, stride)
    if allocate is None or torch.device(device).type != "cpu":
        buffer = torch.empty(numel, dtype=dtype, device=device)
    else:
        buffer = allocate(numel, dtype)
    view = view_of(buffer, shape, stride)
    fill_sentinel(buffer)
    fill_poison(view)
    # No mask and no copy: what the buffer held is known (`fresh_output_outside_writes`).
    return GuardedTensor(name, "output", buffer, view, None, None, device=torch.device(device).type)


#: Elements one step of a chunked check reads at once (4 MiB of float32).
CHUNK = 1 << 20


def _sentinel_bits(dtype: torch.dtype) -> torch.Tensor:
    one = torch.empty(1, dtype=dtype)
    fill_sentinel(one)
    return bits_view(one)[0]


def _differ_from_sentinel(bits: torch.Tensor, start: int, stop: int, sentinel: torch.Tensor) -> int:
    """Elements of ``bits[start:stop]`` that no longer hold the sentinel, CHUNK at a time."""
    count = 0
    for a in range(start, stop, CHUNK):
        count += int((bits[a:min(stop, a + CHUNK)] != sentinel).sum())
    return count


def _pieces(view: torch.Tensor, limit: int = CHUNK):
    """``view`` cut along its leading dimensions into sub-views of at most ``limit`` elements."""
    if view.numel() <= limit or view.dim() == 0:
        yield view
        return
    inner = max(1, view[0].numel()) if view.shape[0] else 1
    step = max(1, limit // inner)
    for i in range(0, view.shape[0], step):
        part = view[i:i + step]
        if part.numel() > limit and part.dim() > 1:
            for row in part:
                yield from _pieces(row, limit)
        else:
            yield part


def _distinct_elements(shape, stride) -> bool:
    """Does every element of the view sit at its own place (no stride 0, no overlapping rows)?"""
    dims = sorted((st, size) for size, st in zip(shape, stride) if size > 1)
    span = 1
    for st, size in dims:
        if st < span:
            return False
        span = st * (size - 1) + span
    return True


def fresh_output_outside_writes(buffer: torch.Tensor, view: torch.Tensor) -> dict[str, int]:
    """`GuardedTensor.outside_writes` for an output handed over fresh (the sentinel around the
    view), in memory that does not grow with the buffer: before the start and past the end are
    the guards (GUARD elements each); in the gaps, the elements of the span that differ from the
    sentinel, less those of the view itself."""
    bits = bits_view(buffer)
    shape, stride = tuple(view.shape), tuple(view.stride())
    if not _distinct_elements(shape, stride):  # an odd allocation whose elements share places: mask it
        covered = covered_mask(buffer.numel(), shape, stride, buffer.device)
        return GuardedTensor("", "output", buffer, view, covered,
                             expected_output_bits(buffer, shape, stride)).outside_writes()
    sentinel = _sentinel_bits(buffer.dtype)
    n = buffer.numel()
    end = GUARD + extent(shape, stride)
    gaps = _differ_from_sentinel(bits, GUARD, end, sentinel)
    for piece in _pieces(bits_view(view)):
        gaps -= int((piece != sentinel).sum())
    counts = {"before": _differ_from_sentinel(bits, 0, min(GUARD, n), sentinel), "gaps": gaps,
              "after": _differ_from_sentinel(bits, end, n, sentinel)}
    return {k: v for k, v in counts.items() if v}


def expected_output_bits(buffer: torch.Tensor, shape, stride) -> torch.Tensor:
    """What an untouched output buffer holds: poison in the view, the sentinel around it. The
    judge compares a learner-allocated buffer with this, not with a snapshot the learner's
    process could have taken after writing."""
    fresh = torch.empty(buffer.numel(), dtype=buffer.dtype)
    fill_sentinel(fresh)
    fill_poison(view_of(fresh, shape, stride))
    return bits_view(fresh).clone()


def outside_regions(guarded: GuardedTensor) -> dict[str, torch.Tensor]:
    """Bool masks over the buffer for the three places outside the view: before, gaps, after."""
    n = guarded.buffer.numel()
    idx = torch.arange(n, device=guarded.buffer.device)
    outside = ~guarded.covered
    end = n - GUARD
    return {
        "gaps": outside & (idx >= GUARD) & (idx < end),
        "after": outside & (idx >= end),
        "before": outside & (idx < GUARD),
    }


def refill_input_guard(guarded: GuardedTensor, value: float, where: torch.Tensor | None = None) -> None:
    """Replace the input's guards and gaps (or just ``where``) with a finite value, to test whether
    the kernel reads them."""
    outside = ~guarded.covered if where is None else where
    if guarded.buffer.dtype.is_floating_point:
        guarded.buffer[outside] = value
    else:
        guarded.buffer[outside] = int(value)
    guarded.snapshot = bits_view(guarded.buffer).clone()
