"""confluent-kafka ``AdminClient`` adapter for replica placement (thin: no algorithm here).

* :func:`snapshot` — racks from ``describe_cluster()``, replicas/leaders/ISR from
  ``describe_topics(TopicCollection)``;
* :func:`create_topic` — ``NewTopic(replica_assignment=…)``, validated first (the broker does not
  rack-check explicit assignments), then :func:`wait_for_topic`: CreateTopics only says the
  controller accepted the topic; the brokers' metadata caches learn it a moment later (seconds on a
  loaded machine), and a DescribeTopics in between answers UNKNOWN_TOPIC_OR_PART.

confluent-kafka has no partition-reassignment API; plans are applied with the kafka-python adapter
(or ``kafka-reassign-partitions --execute`` with the JSON we write).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka_placement.errors import ClusterError, NotAuthorizedError, UnknownTopicError
from kafka_placement.replicas.placement_audit import (
    ClusterSnapshot,
    PartitionState,
    validate_explicit_assignment,
)
from kafka_placement.vocabulary import Broker, TopicPartition

INTERNAL_TOPIC_PREFIX = "__"


def brokers(admin: Any, *, timeout_s: float = 30.0) -> list[Broker]:
    """Brokers (id, rack) from ``describe_cluster``."""
    try:
        cluster = admin.describe_cluster(request_timeout=timeout_s).result(timeout=timeout_s)
    except Exception as exc:  # KafkaException from the client
        raise ClusterError(f"describe_cluster failed: {exc}") from exc
    return sorted(Broker(int(node.id), node.rack or None) for node in cluster.nodes)


def snapshot(
    admin: Any,
    topics: Iterable[str] | None = None,
    *,
    include_internal: bool = False,
    timeout_s: float = 30.0,
    retry_s: float = 10.0,
) -> ClusterSnapshot:
    """Brokers and partitions of ``topics`` (all non-internal topics by default).

    A topic that was just created may be unknown to the broker answering for a moment:
    UNKNOWN_TOPIC_OR_PART and LEADER_NOT_AVAILABLE answers are retried for ``retry_s`` seconds,
    then reported (:class:`UnknownTopicError` for an unknown topic)."""
    if topics is None:
        names = [
            t
            for t in admin.list_topics(timeout=timeout_s).topics
            if include_internal or not t.startswith(INTERNAL_TOPIC_PREFIX)
        ]
    else:
        names = list(topics)
    partitions: dict[TopicPartition, PartitionState] = {}
    if names:
        deadline = time.monotonic() + retry_s
        while True:
            try:
                partitions = _describe(admin, names, timeout_s)
                break
            except _Transient as exc:
                if time.monotonic() >= deadline:
                    if exc.code == "UNKNOWN_TOPIC_OR_PART":
                        raise UnknownTopicError(f"Topic {exc.topic} not found.") from exc.__cause__
                    raise ClusterError(f"describe_topics failed for topic {exc.topic!r}: {exc}") from exc
                time.sleep(0.25)
    return ClusterSnapshot(tuple(brokers(admin, timeout_s=timeout_s)), partitions)


TRANSIENT_ERRORS = ("UNKNOWN_TOPIC_OR_PART", "LEADER_NOT_AVAILABLE")


class _Transient(Exception):
    """A DescribeTopics answer that may change a moment later (metadata still propagating)."""

    def __init__(self, topic: str, code: str, message: str) -> None:
        super().__init__(message)
        self.topic = topic
        self.code = code


def _error_name(exc: BaseException) -> str:
    error = exc.args[0] if exc.args else None
    name = getattr(error, "name", None)
    return str(name()) if callable(name) else ""


def _describe(admin: Any, names: Sequence[str], timeout_s: float) -> dict[TopicPartition, PartitionState]:
    """One DescribeTopics round: partitions of ``names``; raises :class:`_Transient` on a
    propagation error, :class:`ClusterError` on any other."""
    from confluent_kafka import TopicCollection

    partitions: dict[TopicPartition, PartitionState] = {}
    futures = admin.describe_topics(TopicCollection(sorted(names)), request_timeout=timeout_s)
    for name, future in futures.items():
        try:
            description = future.result(timeout=timeout_s)
        except Exception as exc:
            code = _error_name(exc)
            if code in TRANSIENT_ERRORS:
                raise _Transient(name, code, str(exc)) from exc
            if code == "TOPIC_AUTHORIZATION_FAILED":
                raise NotAuthorizedError(
                    f"not authorised to Describe topic {name!r} (TOPIC_AUTHORIZATION_FAILED)"
                ) from None
            raise ClusterError(f"describe_topics failed for topic {name!r}: {exc}") from exc
        for info in description.partitions:
            leader = info.leader.id if info.leader is not None and info.leader.id >= 0 else None
            partitions[TopicPartition(name, int(info.id))] = PartitionState(
                tuple(int(n.id) for n in info.replicas), leader, tuple(int(n.id) for n in info.isr)
            )
    return partitions


def wait_for_topic(
    admin: Any, topic: str, num_partitions: int, *, timeout_s: float = 30.0, poll_s: float = 0.2
) -> None:
    """Block until DescribeTopics shows ``topic`` with ``num_partitions`` partitions, each with a
    leader; :class:`ClusterError` naming what was last seen after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            partitions = _describe(admin, [topic], min(timeout_s, 10.0))
            led = sum(1 for state in partitions.values() if state.leader is not None)
            if len(partitions) == num_partitions and led == num_partitions:
                return
            seen = f"{len(partitions)} of {num_partitions} partitions described, {led} with a leader"
        except _Transient as exc:
            seen = exc.code
        if time.monotonic() >= deadline:
            raise ClusterError(
                f"topic {topic!r} was created but its metadata is not complete after {timeout_s:g} s: "
                f"describe_topics last showed {seen} (want {num_partitions} partitions, each with a leader)"
            )
        time.sleep(poll_s)


def create_topic(
    admin: Any,
    topic: str,
    assignment: Mapping[int, Sequence[int]] | Sequence[Sequence[int]],
    *,
    configs: Mapping[str, str] | None = None,
    require_rack_diversity: bool = True,
    timeout_s: float = 30.0,
    wait_for_metadata: bool = True,
) -> dict[int, list[int]]:
    """Create ``topic`` with exactly ``assignment`` (partition → replicas, leader first); with
    ``wait_for_metadata`` (default) return only once DescribeTopics shows every partition with a
    leader (:func:`wait_for_topic`, bounded by ``timeout_s``)."""
    from confluent_kafka.admin import NewTopic  # type: ignore[attr-defined]

    checked = validate_explicit_assignment(
        assignment, brokers(admin), require_rack_diversity=require_rack_diversity
    )
    # librdkafka wants the partition count spelled out with an explicit assignment (and no RF).
    new_topic = NewTopic(
        topic,
        num_partitions=len(checked),
        replica_assignment=[checked[p] for p in range(len(checked))],
        config=dict(configs or {}),
    )
    future = admin.create_topics([new_topic], request_timeout=timeout_s)[topic]
    try:
        future.result(timeout=timeout_s)
    except Exception as exc:
        raise ClusterError(f"create_topics failed for topic {topic!r}: {exc}") from exc
    if wait_for_metadata:
        wait_for_topic(admin, topic, len(checked), timeout_s=timeout_s)
    return checked
