"""The loads file: strict typed errors naming the value and the range; round trip; loads per broker
(leader vs follower) computed by hand."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError
from kafka_placement.replicas.loads import broker_loads, format_loads, parse_loads

GOOD: dict[str, Any] = {
    "brokers": [
        {"id": 0, "rack": "r1", "capacity": {"disk": 1000, "bytes_in": 50, "bytes_out": 80}},
        {"id": 1, "rack": "r2"},
        {"id": 2, "rack": "r1"},
    ],
    "partitions": [
        {"topic": "t", "partition": 0, "replicas": [0, 1], "size": 100, "bytes_in": 10, "bytes_out": 25},
        {"topic": "t", "partition": 1, "replicas": [1, 2], "size": 40, "bytes_in": 3},
        {"topic": "u", "partition": 0, "replicas": [2]},
    ],
}


def test_loads_leader_and_follower() -> None:
    model = parse_loads(json.dumps(GOOD))
    loads = broker_loads(model)
    # broker 0 leads t-0: disk 100, in 10, out 25, leader in 10, 1 leader
    assert loads[0].tolist() == [100, 10, 25, 10, 1]
    # broker 1 follows t-0 (disk and in, no out) and leads t-1 (no bytes_out given: 0)
    assert loads[1].tolist() == [140, 13, 0, 3, 1]
    # broker 2 follows t-1 and leads u-0 (no size or rates: zero)
    assert loads[2].tolist() == [40, 3, 0, 0, 1]
    assert model.capacity[0].tolist() == [1000, 50, 80]
    assert np.isinf(model.capacity[1]).all()


def test_round_trip() -> None:
    model = parse_loads(json.dumps(GOOD))
    again = parse_loads(format_loads(model))
    assert (broker_loads(again) == broker_loads(model)).all()
    assert json.loads(format_loads(again)) == json.loads(format_loads(model))


def _with(path: list[Any], value: Any) -> str:
    doc = json.loads(json.dumps(GOOD))
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("path", "value", "error", "text"),
    [
        (
            ["brokers", 0, "id"],
            -1,
            InvalidArgumentError,
            r"brokers\[0\]\.id must be an int in \[0, 2147483647\], got -1",
        ),
        (["brokers", 0, "id"], True, InvalidArgumentError, r"brokers\[0\]\.id .* got True"),
        (["brokers", 1, "id"], 0, InvalidBrokerError, "broker id 0 is listed twice"),
        (["brokers", 1, "rack"], None, InvalidBrokerError, r"no rack for \[1\]"),
        (
            ["brokers", 0, "capacity", "disk"],
            0,
            InvalidArgumentError,
            r"capacity\.disk must be a number in \(0",
        ),
        (["brokers", 0, "capacity", "cpu"], 1, InvalidArgumentError, "unknown field 'cpu'"),
        (
            ["partitions", 0, "size"],
            -5,
            InvalidArgumentError,
            r"partitions\[0\]\.size must be a number in \[0, .*got -5",
        ),
        (["partitions", 0, "bytes_in"], "fast", InvalidArgumentError, r"bytes_in .* got 'fast'"),
        (["partitions", 0, "replicas"], [], InvalidArgumentError, r"replicas must be a list of 1\.\.64"),
        (["partitions", 0, "replicas"], [0, 0], InvalidArgumentError, "lists a broker twice"),
        (["partitions", 0, "replicas"], [0, 7], InvalidBrokerError, "names broker 7"),
        (["partitions", 1, "partition"], 0, InvalidArgumentError, "t-0 is listed twice"),
        (["partitions", 0, "topic"], "", InvalidArgumentError, r"topic must be a string of 1\.\.249"),
        (["partitions", 0, "replicas"], KeyError, InvalidArgumentError, "missing field 'replicas'"),
        (["brokers"], [], InvalidArgumentError, r"'brokers' must be a list of 1\.\.100000"),
    ],
)
def test_bad_values_are_named(path: list[Any], value: Any, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        parse_loads(_with(path, value))


def test_not_json_and_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidArgumentError, match="not JSON"):
        parse_loads("{")
    with pytest.raises(InvalidArgumentError, match="unknown field"):
        parse_loads('{"brokers": [{"id": 0}], "extra": 1}')
    from kafka_placement.replicas.loads import loads_file

    monkeypatch.setattr(loads_file, "MAX_LOADS_CHARS", 1000)
    with pytest.raises(InvalidArgumentError, match="1001 characters; at most 1000"):
        parse_loads(" " * 1001)
