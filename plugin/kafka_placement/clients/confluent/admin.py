"""confluent-kafka ``AdminClient`` adapter for replica placement (thin: no algorithm here).

* :func:`snapshot` — racks from ``describe_cluster()``, replicas/leaders/ISR from
  ``describe_topics(TopicCollection)``;
* :func:`create_topic` — ``NewTopic(replica_assignment=…)``, validated first (the broker does not
  rack-check explicit assignments).

confluent-kafka has no partition-reassignment API; plans are applied with the kafka-python adapter
(or ``kafka-reassign-partitions --execute`` with the JSON we write).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka_placement.errors import ClusterError, UnknownTopicError
from kafka_placement.replicas.audit import ClusterSnapshot, PartitionState, validate_explicit_assignment
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
) -> ClusterSnapshot:
    """Brokers and partitions of ``topics`` (all non-internal topics by default)."""
    from confluent_kafka import TopicCollection

    if topics is None:
        names = [
            t for t in admin.list_topics(timeout=timeout_s).topics
            if include_internal or not t.startswith(INTERNAL_TOPIC_PREFIX)
        ]
    else:
        names = list(topics)
    partitions: dict[TopicPartition, PartitionState] = {}
    if names:
        futures = admin.describe_topics(TopicCollection(sorted(names)), request_timeout=timeout_s)
        for name, future in futures.items():
            try:
                description = future.result(timeout=timeout_s)
            except Exception as exc:
                error = exc.args[0] if exc.args else None
                if getattr(error, "name", lambda: "")() == "UNKNOWN_TOPIC_OR_PART":
                    raise UnknownTopicError(f"Topic {name} not found.") from exc
                raise ClusterError(f"describe_topics failed for topic {name!r}: {exc}") from exc
            for info in description.partitions:
                leader = info.leader.id if info.leader is not None and info.leader.id >= 0 else None
                partitions[TopicPartition(name, int(info.id))] = PartitionState(
                    tuple(int(n.id) for n in info.replicas), leader, tuple(int(n.id) for n in info.isr)
                )
    return ClusterSnapshot(tuple(brokers(admin, timeout_s=timeout_s)), partitions)


def create_topic(
    admin: Any,
    topic: str,
    assignment: Mapping[int, Sequence[int]] | Sequence[Sequence[int]],
    *,
    configs: Mapping[str, str] | None = None,
    require_rack_diversity: bool = True,
    timeout_s: float = 30.0,
) -> dict[int, list[int]]:
    """Create ``topic`` with exactly ``assignment`` (partition → replicas, leader first)."""
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
    return checked
