"""The messages between the judge and the learner's process, defined once.

The judge (the process that decides verdicts) never imports learner code. It starts a runner
(`grader.learner.runner`) in a sandbox (`grader.learner.sandbox`) and talks to it over two pipes:

* judge -> runner: requests (``call``, ``reset``, ``timing_*``, ``exit``);
* runner -> judge: one reply per request, plus the ``ready`` message after the learner's file
  was imported.

A message is a 4-byte big-endian length and that many bytes of UTF-8 JSON. The judge reads at
most `MAX_REPLY_BYTES` per reply and treats anything malformed as the runner's failure: nothing
the runner sends can say "passed"; replies carry data (outputs, launch records, sentences about
exceptions) that the judge checks itself.

Values (arguments, results, launch arguments) are JSON with five tagged forms:

* ``{"$tensor": {...}}`` a tensor in one of the shared arenas (`grader.wire.arena`): which arena,
  the byte offset and element count of the buffer it lives in, its dtype, shape, strides and
  storage offset (in elements, relative to the buffer), and the device the learner saw it on;
* ``{"$tuple": [...]}`` a tuple (JSON has only lists);
* ``{"$float": "inf" | "-inf" | "nan"}`` non-finite floats;
* ``{"$opaque": "text"}`` anything else, described (a launch argument the judge cannot use);
* ``{"$cuda": "..."}`` a CUDA tensor of the judge's, opened by the learner's process through CUDA's
  inter-process memory (the timed calls' inputs and output slots, `grader.judge.clock`): what
  ``torch.multiprocessing`` needs to open it, pickled. Only the judge writes this form
  (`encode_shared`) and only the learner's process reads it (`decode_shared`): the judge never
  unpickles what the learner's process sends.
"""

from __future__ import annotations

import base64
import json
import math
import os
import select
import struct
import time
from typing import Any

#: The largest reply the judge accepts (tensors travel through the arenas, not the pipe).
MAX_REPLY_BYTES = 16 << 20
#: Texts a runner sends (exception sentences, stderr tails) are cut to this many characters.
MAX_TEXT = 4000

_HEADER = struct.Struct(">I")


class ProtocolError(Exception):
    """The other side sent something that is not a message, or went away."""


class ReplyTimeout(Exception):
    """No reply within the time allowed."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def send(fd: int, message: dict) -> None:
    body = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    _write_all(fd, _HEADER.pack(len(body)) + body)


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks = []
    remaining = size
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReplyTimeout()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise ReplyTimeout()
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ProtocolError("the other side closed the pipe")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, *, timeout: float | None = None, limit: int = MAX_REPLY_BYTES) -> dict:
    """The next message; ReplyTimeout after ``timeout`` seconds, ProtocolError if malformed."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > limit:
        raise ProtocolError(f"a message of {size} bytes (the limit is {limit})")
    body = _read_exact(fd, size, deadline)
    try:
        message = json.loads(body.decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"a message that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message that is not a JSON object")
    return message


# --- values --------------------------------------------------------------------------------

def encode_scalar(value: Any) -> Any:
    """JSON for a Python value without tensors (floats that JSON cannot spell are tagged)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, tuple):
        return {"$tuple": [encode_scalar(v) for v in value]}
    if isinstance(value, list):
        return [encode_scalar(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: encode_scalar(v) for k, v in value.items()}
    return opaque(value)


def opaque(value: Any) -> dict:
    try:
        text = repr(value)
    except Exception:  # a learner object whose repr raises
        text = f"<{type(value).__name__}>"
    return {"$opaque": text[:200]}


def decode_scalar(value: Any) -> Any:
    """The inverse of `encode_scalar` for values without tensors; tensors raise ProtocolError."""
    if isinstance(value, list):
        return [decode_scalar(v) for v in value]
    if isinstance(value, dict):
        if "$float" in value:
            return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(value["$float"], math.nan)
        if "$tuple" in value:
            items = value["$tuple"]
            if not isinstance(items, list):
                raise ProtocolError("a malformed tuple")
            return tuple(decode_scalar(v) for v in items)
        if "$opaque" in value:
            return Opaque(str(value["$opaque"])[:200])
        if "$tensor" in value:
            raise ProtocolError("a tensor where a plain value was expected")
        return {str(k): decode_scalar(v) for k, v in value.items()}
    return value


class Opaque(str):
    """A value the other side could only describe (its repr)."""


def text(value: Any) -> str:
    """A sentence from the runner, as a bounded plain string."""
    return str(value)[:MAX_TEXT] if value is not None else ""


# --- CUDA tensors shared with the learner's process (judge -> learner only) -------------------------

def encode_shared(value: Any) -> Any:
    """A value whose tensors are the judge's CUDA tensors, for the learner's process to open in place."""
    import torch

    if isinstance(value, torch.Tensor):
        import pickle

        from torch.multiprocessing import reductions

        _, args = reductions.reduce_tensor(value)
        return {"$cuda": base64.b64encode(pickle.dumps(args)).decode()}
    if isinstance(value, tuple):
        return {"$tuple": [encode_shared(v) for v in value]}
    if isinstance(value, list):
        return [encode_shared(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode_shared(v) for k, v in value.items()}
    return encode_scalar(value)


def decode_shared(value: Any) -> Any:
    """The inverse of `encode_shared`, in the learner's process: each ``$cuda`` becomes a tensor on the
    judge's memory (the pickle comes from the judge, which started this process)."""
    if isinstance(value, list):
        return [decode_shared(v) for v in value]
    if isinstance(value, dict):
        if "$cuda" in value:
            import pickle

            from torch.multiprocessing import reductions

            return reductions.rebuild_cuda_tensor(*pickle.loads(base64.b64decode(value["$cuda"])))
        if "$tuple" in value:
            items = value["$tuple"]
            if not isinstance(items, list):
                raise ProtocolError("a malformed tuple")
            return tuple(decode_shared(v) for v in items)
        if "$float" in value or "$opaque" in value or "$tensor" in value:
            return decode_scalar(value)
        return {str(k): decode_shared(v) for k, v in value.items()}
    return value
