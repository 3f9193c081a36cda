"""The wire between the judge and the learner's process (`grader.wire.protocol`): one format for
every message, values that survive the trip, and the one pickled form read on the learner's side only."""

from __future__ import annotations

import base64
import json
import math
import os
import pickle

import pytest

from grader.wire import protocol


class _Explodes:
    def __reduce__(self):
        return (pytest.fail, ("the judge unpickled what the learner's process sent",))


def _trip(value):
    return json.loads(json.dumps(value, allow_nan=False))


@pytest.mark.parametrize("value", [
    1, 2.5, "text", None, True, [1, 2.0], (1, (2, 3)), {"a": (1.5, [math.inf])}, -math.inf,
])
def test_plain_values_cross_both_ways_unchanged(value):
    assert protocol.decode_scalar(_trip(protocol.encode_scalar(value))) == value
    assert protocol.decode_shared(_trip(protocol.encode_shared(value))) == value


def test_nan_crosses_as_a_tag():
    assert math.isnan(protocol.decode_shared(_trip(protocol.encode_shared(math.nan))))


def test_the_judge_reads_a_pickled_tag_as_data_never_as_a_pickle():
    """A learner's process that sends the CUDA form back gets a plain dict, not an unpickled object."""
    evil = {"$cuda": base64.b64encode(pickle.dumps(_Explodes())).decode()}
    assert protocol.decode_scalar(_trip({"result": evil})) == {"result": evil}


def test_a_message_is_one_length_and_json():
    read, write = os.pipe()
    try:
        protocol.send(write, {"op": "call", "args": protocol.encode_scalar((1, math.inf))})
        assert protocol.receive(read, timeout=5) == {"op": "call", "args": {"$tuple": [1, {"$float": "inf"}]}}
        protocol.send(write, {"padding": "x" * 100})
        with pytest.raises(protocol.ProtocolError, match="limit"):
            protocol.receive(read, timeout=5, limit=50)
    finally:
        os.close(read)
        os.close(write)
