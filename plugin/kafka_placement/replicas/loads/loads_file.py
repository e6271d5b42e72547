"""The loads file (``--loads FILE``), read strictly and written back:

``{"brokers": [{"id": 0, "rack": "r1", "capacity": {"disk": BYTES, "bytes_in": BPS, "bytes_out": BPS}}, …],
"partitions": [{"topic": "t", "partition": 0, "replicas": [0, 1, 2], "size": BYTES, "bytes_in": BPS,
"bytes_out": BPS}, …]}``

``rack``, ``capacity`` (and each of its fields) and the three loads are optional; ``replicas[0]`` is the
preferred leader. ``bytes_out`` is everything the leader serves (consumers and followers' fetches).
Every error is an :class:`InvalidArgumentError` naming the entry, the field, the bad value and the
allowed range; sizes are bounded before anything is allocated.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.java import INT_MAX
from kafka_placement.replicas.loads.model import (
    CAPACITY_RESOURCES,
    BrokerSpec,
    LoadModel,
    PartitionSpec,
    build_model,
)

#: Largest file read (characters): ~3 million partition entries.
MAX_LOADS_CHARS = 512 * 1024 * 1024
MAX_BROKERS = 100_000
MAX_PARTITIONS = 5_000_000
MAX_REPLICATION_FACTOR = 64
MAX_NAME_CHARS = 249  # Kafka's longest topic name
MAX_RACK_CHARS = 1024
#: Largest byte count or rate accepted (2^63 - 1, a Java long).
MAX_AMOUNT = float(2**63 - 1)

BROKER_FIELDS = {"id", "rack", "capacity"}
PARTITION_FIELDS = {"topic", "partition", "replicas", "size", "bytes_in", "bytes_out"}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _amount(value: object, where: str, *, positive: bool = False) -> float:
    low = "(0" if positive else "[0"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgumentError(f"{where} must be a number in {low}, {2**63 - 1}], got {value!r:.60}")
    amount = float(value)
    if not math.isfinite(amount) or amount < 0 or amount > MAX_AMOUNT or (positive and amount == 0):
        raise InvalidArgumentError(f"{where} must be a number in {low}, {2**63 - 1}], got {value!r:.60}")
    return amount


def _object(value: object, where: str, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{where} must be a JSON object, got {type(value).__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise InvalidArgumentError(
            f"{where} has unknown field {unknown[0]!r:.60} (allowed: {sorted(allowed)})"
        )
    return value


def _broker(value: object, i: int) -> BrokerSpec:
    where = f"brokers[{i}]"
    entry = _object(value, where, BROKER_FIELDS)
    if "id" not in entry:
        raise InvalidArgumentError(f"{where}: missing field 'id'")
    ident = entry["id"]
    if not _is_int(ident) or not 0 <= ident <= INT_MAX:
        raise InvalidArgumentError(f"{where}.id must be an int in [0, {INT_MAX}], got {ident!r:.60}")
    rack = entry.get("rack")
    if rack is not None and (not isinstance(rack, str) or not 0 < len(rack) <= MAX_RACK_CHARS):
        raise InvalidArgumentError(
            f"{where}.rack must be a string of 1..{MAX_RACK_CHARS} characters or null, got {rack!r:.60}"
        )
    caps: dict[str, float | None] = dict.fromkeys(CAPACITY_RESOURCES)
    if entry.get("capacity") is not None:
        capacity = _object(entry["capacity"], f"{where}.capacity", set(CAPACITY_RESOURCES))
        for name, amount in capacity.items():
            if amount is not None:
                caps[name] = _amount(amount, f"{where}.capacity.{name}", positive=True)
    return BrokerSpec(ident, rack, caps["disk"], caps["bytes_in"], caps["bytes_out"])


def _partition(value: object, i: int) -> PartitionSpec:
    where = f"partitions[{i}]"
    entry = _object(value, where, PARTITION_FIELDS)
    for name in ("topic", "partition", "replicas"):
        if name not in entry:
            raise InvalidArgumentError(f"{where}: missing field {name!r}")
    topic, number, replicas = entry["topic"], entry["partition"], entry["replicas"]
    if not isinstance(topic, str) or not 0 < len(topic) <= MAX_NAME_CHARS:
        raise InvalidArgumentError(
            f"{where}.topic must be a string of 1..{MAX_NAME_CHARS} characters, got {topic!r:.60}"
        )
    if not _is_int(number) or not 0 <= number <= INT_MAX:
        raise InvalidArgumentError(f"{where}.partition must be an int in [0, {INT_MAX}], got {number!r:.60}")
    if not isinstance(replicas, list) or not 1 <= len(replicas) <= MAX_REPLICATION_FACTOR:
        raise InvalidArgumentError(
            f"{where}.replicas must be a list of 1..{MAX_REPLICATION_FACTOR} broker ids, got {replicas!r:.60}"
        )
    for b in replicas:
        if not _is_int(b) or not 0 <= b <= INT_MAX:
            raise InvalidArgumentError(
                f"{where}.replicas: broker id must be an int in [0, {INT_MAX}], got {b!r:.60}"
            )
    loads = {
        name: _amount(entry[name], f"{where}.{name}") if entry.get(name) is not None else 0.0
        for name in ("size", "bytes_in", "bytes_out")
    }
    return PartitionSpec(topic, number, tuple(replicas), loads["size"], loads["bytes_in"], loads["bytes_out"])


def parse_loads(text: str) -> LoadModel:
    """A :class:`LoadModel` from the loads file's text."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"the loads file must be text, got {type(text).__name__}")
    if len(text) > MAX_LOADS_CHARS:
        raise InvalidArgumentError(
            f"the loads file has {len(text)} characters; at most {MAX_LOADS_CHARS} are read"
        )
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentError(
            f"the loads file is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise InvalidArgumentError("the loads file is nested too deeply") from None
    top = _object(document, "the loads file", {"brokers", "partitions"})
    brokers, partitions = top.get("brokers"), top.get("partitions", [])
    if not isinstance(brokers, list) or not 1 <= len(brokers) <= MAX_BROKERS:
        raise InvalidArgumentError(
            f"'brokers' must be a list of 1..{MAX_BROKERS} brokers, got {brokers!r:.60}"
        )
    if not isinstance(partitions, list) or len(partitions) > MAX_PARTITIONS:
        raise InvalidArgumentError(
            f"'partitions' must be a list of at most {MAX_PARTITIONS} partitions, got "
            f"{type(partitions).__name__} of {len(partitions) if isinstance(partitions, list) else '?'}"
        )
    return build_model(
        [_broker(b, i) for i, b in enumerate(brokers)], [_partition(p, i) for i, p in enumerate(partitions)]
    )


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(float(value), 3)


def loads_document(model: LoadModel) -> dict[str, Any]:
    """The loads file's JSON document for a model (unknown capacities left out)."""
    brokers: list[dict[str, Any]] = []
    for i, ident in enumerate(model.broker_ids):
        entry: dict[str, Any] = {"id": int(ident)}
        if model.racks[i] is not None:
            entry["rack"] = model.racks[i]
        capacity = {
            name: _number(v)
            for name, v in zip(CAPACITY_RESOURCES, model.capacity[i], strict=True)
            if math.isfinite(v)
        }
        if capacity:
            entry["capacity"] = capacity
        brokers.append(entry)
    partitions = [
        {
            "topic": model.topics[int(model.topic_index[p])],
            "partition": int(model.partition[p]),
            "replicas": model.replica_ids(model.replicas, p),
            "size": _number(model.size[p]),
            "bytes_in": _number(model.bytes_in[p]),
            "bytes_out": _number(model.bytes_out[p]),
        }
        for p in range(model.num_partitions)
    ]
    return {"brokers": brokers, "partitions": partitions}


def format_loads(model: LoadModel) -> str:
    """The loads file's text: one broker or partition per line."""
    document = loads_document(model)
    lines = ['{"brokers": [']
    lines.append(",\n".join(json.dumps(b, separators=(",", ":")) for b in document["brokers"]))
    lines.append('], "partitions": [')
    lines.append(",\n".join(json.dumps(p, separators=(",", ":")) for p in document["partitions"]))
    lines.append("]}")
    return "\n".join(lines)
