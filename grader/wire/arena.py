"""Shared memory between the judge and the learner's process: tensors cross without copies.

An `Arena` is an anonymous memory file (``memfd_create``) mapped by both processes: the judge
creates it and hands the file descriptor to the runner it starts. It is sparse, so its size is
only an upper bound; pages cost memory once touched. Two arenas per runner:

* ``in``: the judge places the guarded inputs of a call here (`grader.wire.guards` with
  ``allocate=arena.empty``). The learner's kernel reads them in place (interpreter) or from a
  copy on the GPU that the runner writes back after the call, so the judge sees any write into an
  input or its guards;
* ``out``: the runner places what the learner allocates (`torch.empty_like` is intercepted into
  guarded, poisoned buffers) and any returned tensor that lies elsewhere. The judge reads results
  and their guards from here and never trusts a description without checking its bounds.

Both are bump allocators: the judge resets ``in`` and asks the runner to reset ``out`` at the
start of every check, so tensors of one check stay valid while it runs.
"""

from __future__ import annotations

import functools
import mmap
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

ALIGN = 256  # bytes: the alignment torch's own allocator gives a tensor
#: The dtypes a tensor description may name (torch's names without the ``torch.`` prefix).
DTYPE_NAMES = ("float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


@functools.cache
def dtypes() -> dict[str, "torch.dtype"]:
    """``{name: torch dtype}`` of `DTYPE_NAMES`. Torch is imported on first use, not with this module: the
    judge creates the arenas and starts the learner's process before its own torch import (about 2 s of
    CPU), so that the two processes import torch at the same time."""
    import torch

    return {name: getattr(torch, name) for name in DTYPE_NAMES}


def dtype_name(dtype: "torch.dtype") -> str:
    return next((name for name, known in dtypes().items() if known == dtype), str(dtype))


class ArenaFull(Exception):
    pass


class Arena:
    """A sparse shared memory file seen as bytes, with a bump allocator."""

    def __init__(self, size: int, *, fd: int | None = None, name: str = "arena"):
        self.size = size
        if fd is None:
            fd = os.memfd_create(f"grade-{name}", 0)  # not inherited: the launcher passes it on purpose
            os.ftruncate(fd, size)
        self.fd = fd
        self.name = name
        self._map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.used = 0

    @functools.cached_property
    def bytes(self) -> "torch.Tensor":
        """The whole arena as a tensor of bytes (made on first use: see `dtypes`)."""
        import torch

        return torch.frombuffer(self._map, dtype=torch.uint8, count=self.size)

    def reset(self) -> None:
        self.used = 0

    def allocate(self, nbytes: int) -> int:
        """Byte offset of a fresh, aligned region of ``nbytes``."""
        offset = -(-self.used // ALIGN) * ALIGN
        if offset + nbytes > self.size:
            raise ArenaFull(f"the {self.name} arena is full ({self.size >> 20} MiB): a check asked for "
                            f"{nbytes >> 20} MiB more")
        self.used = offset + nbytes
        return offset

    def empty(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """A 1-D tensor of ``numel`` elements inside the arena (contents undefined)."""
        offset = self.allocate(numel * dtype.itemsize)
        return self.view(offset, numel, dtype)

    def view(self, offset: int, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """The arena's bytes [offset, offset + numel * itemsize) as a 1-D tensor of ``dtype``."""
        itemsize = dtype.itemsize
        end = offset + numel * itemsize
        if offset < 0 or numel < 0 or end > self.size or offset % itemsize:
            raise ValueError(f"bytes {offset}..{end} are not a valid {dtype_name(dtype)} region of the "
                             f"{self.name} arena ({self.size} bytes)")
        return self.bytes[offset:end].view(dtype)

    def offset_of(self, tensor: torch.Tensor) -> int | None:
        """Byte offset of ``tensor``'s storage in this arena, or None if it lives elsewhere."""
        if tensor.device.type != "cpu":
            return None
        base = self.bytes.data_ptr()
        ptr = tensor.untyped_storage().data_ptr()
        if base <= ptr < base + self.size:
            return ptr - base
        return None

    def close(self) -> None:
        try:
            self._map.close()
        except BufferError:  # tensors still view it; the mapping goes with the process
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass


def describe(tensor: torch.Tensor, arena_name: str, buffer_offset: int, buffer_numel: int, storage_offset: int, *,
             device: str = "cpu", allocation: int | None = None) -> dict:
    """The ``$tensor`` description of a view into a buffer that starts at byte ``buffer_offset``;
    ``storage_offset`` is in elements from the buffer's first element."""
    return {
        "arena": arena_name,
        "offset": buffer_offset,
        "numel": buffer_numel,
        "dtype": dtype_name(tensor.dtype),
        "shape": list(tensor.shape),
        "stride": list(tensor.stride()),
        "storage_offset": storage_offset,
        "device": device,
        "allocation": allocation,
    }


def materialize(desc: dict, arenas: dict[str, Arena]) -> tuple[torch.Tensor, torch.Tensor]:
    """(buffer, view) for a ``$tensor`` description, every field checked against the arena."""
    try:
        arena = arenas[desc["arena"]]
        dtype = dtypes()[desc["dtype"]]
        offset, numel = int(desc["offset"]), int(desc["numel"])
        shape = [int(s) for s in desc["shape"]]
        stride = [int(s) for s in desc["stride"]]
        storage_offset = int(desc["storage_offset"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"a malformed tensor description ({exc})") from None
    if len(shape) != len(stride) or any(s < 0 for s in shape) or any(s < 0 for s in stride) or storage_offset < 0:
        raise ValueError("a tensor description with negative sizes or strides")
    buffer = arena.view(offset, numel, dtype)
    if all(shape):
        last = storage_offset + sum((size - 1) * st for size, st in zip(shape, stride))
        if last >= numel:
            raise ValueError("a tensor description that reaches past its buffer")
    view = buffer.as_strided(shape, stride, buffer.storage_offset() + storage_offset)
    return buffer, view
