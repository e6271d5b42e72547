"""kafka-reassign-partitions JSON: ``{"version":1,"partitions":[{"topic","partition","replicas",
["log_dirs"]}]}`` — read strictly (errors name the line or the field), written like the tool.

Validation texts follow ``kafka-reassign-partitions`` (``ReassignPartitionsCommand``) where it has
one: "Partition reassignment list cannot be empty", "Partition replica list cannot be empty",
"Partition reassignment contains duplicate topic partitions: …", "Partition replica lists may not
contain duplicate entries: …", "Not supported version field value …", "Size of replicas list … is
different from size of log dirs list … for partition …", "Unknown broker id …", "Topic … not found.",
"Unable to find partition: …".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_placement.errors import InvalidBrokerError, ReassignmentFormatError, UnknownTopicError
from kafka_placement.java import INT_MAX
from kafka_placement.vocabulary import TopicPartition

ANY_LOG_DIR = "any"
#: Largest reassignment text read (characters): ~2 million partition entries; a larger file is refused
#: before parsing rather than allocated whole.
MAX_JSON_CHARS = 256 * 1024 * 1024


@dataclass(frozen=True)
class PartitionMove:
    """One entry of the file: the full new replica list (leader first) and optional log dirs."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...] | None = None

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _field(obj: Mapping[str, Any], name: str, where: str) -> Any:
    if name not in obj:
        raise ReassignmentFormatError(f"{where}: missing field {name!r}")
    return obj[name]


def parse_reassignment(text: str, *, allow_empty: bool = False) -> list[PartitionMove]:
    """Parse and validate a reassignment file. Errors: :class:`ReassignmentFormatError`.

    ``allow_empty``: ``{"partitions": []}`` is a valid plan that moves nothing (what ``reassign plan``
    writes for a balanced cluster); Kafka's tool refuses it, which stays the default."""
    if not isinstance(text, str):
        raise ReassignmentFormatError(f"reassignment JSON must be text, got {type(text).__name__}")
    if len(text) > MAX_JSON_CHARS:
        raise ReassignmentFormatError(
            f"reassignment JSON is {len(text):,} characters; the limit is {MAX_JSON_CHARS:,}"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReassignmentFormatError(
            f"malformed reassignment JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise ReassignmentFormatError("reassignment JSON is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise ReassignmentFormatError(f"top level must be a JSON object, got {type(data).__name__}")
    version = data.get("version", 1)  # the tool reads a missing version as 1
    if not _is_int(version) or version != 1:
        raise ReassignmentFormatError(f"Not supported version field value {json.dumps(version)}")
    partitions = _field(data, "partitions", "top level")
    if not isinstance(partitions, list):
        raise ReassignmentFormatError(f"field 'partitions' must be a list, got {type(partitions).__name__}")
    if not partitions and not allow_empty:
        raise ReassignmentFormatError("Partition reassignment list cannot be empty")
    moves: list[PartitionMove] = []
    seen: set[TopicPartition] = set()
    duplicates: list[str] = []
    for i, entry in enumerate(partitions):
        where = f"partitions[{i}]"
        if not isinstance(entry, dict):
            raise ReassignmentFormatError(f"{where} must be an object, got {type(entry).__name__}")
        topic = _field(entry, "topic", where)
        if not isinstance(topic, str) or not topic:
            raise ReassignmentFormatError(
                f"{where}.topic must be a non-empty string, got {json.dumps(topic)}"
            )
        partition = _field(entry, "partition", where)
        if not _is_int(partition) or not 0 <= partition <= INT_MAX:
            raise ReassignmentFormatError(
                f"{where}.partition must be an int in [0, {INT_MAX}], got {json.dumps(partition)}"
            )
        replicas = _field(entry, "replicas", where)
        if not isinstance(replicas, list) or not all(_is_int(b) and 0 <= b <= INT_MAX for b in replicas):
            raise ReassignmentFormatError(
                f"{where}.replicas must be a list of broker ids (ints in [0, {INT_MAX}]), "
                f"got {json.dumps(replicas)[:200]}"
            )
        tp = TopicPartition(topic, partition)
        if not replicas:
            raise ReassignmentFormatError(
                f"Partition replica list cannot be empty ({where}: {topic}-{partition})"
            )
        if len(set(replicas)) != len(replicas):
            raise ReassignmentFormatError(
                f"Partition replica lists may not contain duplicate entries: {topic}-{partition} "
                f"contains duplicate entries {replicas} ({where})"
            )
        log_dirs: tuple[str, ...] | None = None
        if "log_dirs" in entry:
            dirs = entry["log_dirs"]
            if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
                raise ReassignmentFormatError(
                    f"{where}.log_dirs must be a list of strings, got {json.dumps(dirs)}"
                )
            if len(dirs) != len(replicas):
                raise ReassignmentFormatError(
                    f"Size of replicas list {replicas} is different from size of log dirs list {dirs} "
                    f"for partition {topic}-{partition}"
                )
            log_dirs = tuple(dirs)
        unknown = sorted(set(entry) - {"topic", "partition", "replicas", "log_dirs"})
        if unknown:
            raise ReassignmentFormatError(f"{where}: unknown field(s) {unknown}")
        if tp in seen:
            duplicates.append(f"{topic}-{partition}")
        seen.add(tp)
        moves.append(PartitionMove(topic, partition, tuple(replicas), log_dirs))
    if duplicates:
        raise ReassignmentFormatError(
            f"Partition reassignment contains duplicate topic partitions: {', '.join(duplicates)}"
        )
    return moves


def format_reassignment(
    assignment: Mapping[TopicPartition, Sequence[int]] | Iterable[PartitionMove], *, log_dirs: bool = True
) -> str:
    """The tool's format: compact JSON, partitions sorted, ``log_dirs`` of ``"any"`` per replica."""
    if isinstance(assignment, Mapping):
        moves = [PartitionMove(tp.topic, tp.partition, tuple(r)) for tp, r in assignment.items()]
    else:
        moves = list(assignment)
    entries: list[dict[str, Any]] = []
    for move in sorted(moves, key=lambda m: (m.topic, m.partition)):
        entry: dict[str, Any] = {
            "topic": move.topic,
            "partition": move.partition,
            "replicas": list(move.replicas),
        }
        if log_dirs:
            entry["log_dirs"] = list(move.log_dirs) if move.log_dirs else [ANY_LOG_DIR] * len(move.replicas)
        entries.append(entry)
    return json.dumps({"version": 1, "partitions": entries}, separators=(",", ":"))


def check_against_cluster(
    moves: Iterable[PartitionMove],
    partitions_per_topic: Mapping[str, int],
    broker_ids: Iterable[int],
) -> None:
    """Reject moves naming topics, partitions or brokers the cluster does not have."""
    brokers = set(broker_ids)
    for move in moves:
        if move.topic not in partitions_per_topic:
            raise UnknownTopicError(f"Topic {move.topic} not found.")
        if move.partition >= partitions_per_topic[move.topic]:
            raise UnknownTopicError(
                f"Unable to find partition: {move.topic}-{move.partition} "
                f"(topic {move.topic!r} has partitions 0..{partitions_per_topic[move.topic] - 1})"
            )
        for b in move.replicas:
            if b not in brokers:
                raise InvalidBrokerError(
                    f"Unknown broker id {b} (in {move.topic}-{move.partition}; "
                    f"cluster brokers: {sorted(brokers)})"
                )


def log_dir_moves(moves: Iterable[PartitionMove]) -> dict[tuple[TopicPartition, int], str]:
    """``{(topic-partition, broker): log dir}`` for every replica given a dir other than ``"any"``."""
    return {
        (m.topic_partition, broker): log_dir
        for m in moves
        if m.log_dirs
        for broker, log_dir in zip(m.replicas, m.log_dirs, strict=True)
        if log_dir != ANY_LOG_DIR
    }


def as_assignment(moves: Iterable[PartitionMove]) -> dict[TopicPartition, list[int]]:
    """``{TopicPartition: replicas}`` of a parsed file."""
    return {m.topic_partition: list(m.replicas) for m in moves}
