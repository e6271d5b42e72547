"""The small vocabulary shared by the three placements.

Every algorithm in this package speaks only these types (plus ints, strs and bytes), never a
client library's classes; adapters translate at the edge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from kafka_placement.errors import InvalidArgumentError


class TopicPartition(NamedTuple):
    """One partition of one topic. Orders by (topic, partition), as Kafka's assignors sort."""

    topic: str
    partition: int


def group_by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """``topic → partition numbers`` in first-seen order: the shape Kafka's wire formats and admin
    requests list partitions in."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return by_topic


def _as_topic_partition(value: object) -> TopicPartition:
    if isinstance(value, TopicPartition):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        topic, partition = value
        if isinstance(topic, str) and isinstance(partition, int) and not isinstance(partition, bool):
            return TopicPartition(topic, partition)
    raise InvalidArgumentError(
        f"owned partition must be a TopicPartition(topic: str, partition: int), got {value!r}"
    )


def check_priority(priority: object) -> int | None:
    """A failover priority: ``None`` or an int that fits the 4-byte signed userData field."""
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise InvalidArgumentError(
            f"priority must be an int in [-2147483648, 2147483647] or None, got {priority!r}"
        )
    if priority is not None and not -(2**31) <= priority <= 2**31 - 1:
        raise InvalidArgumentError(
            f"priority {priority} is out of range [-2147483648, 2147483647] (a 4-byte signed int)"
        )
    return priority


#: Equal subscriptions share one tuple (members of a group mostly subscribe alike), so an assignor
#: groups members by identity instead of comparing or hashing long tuples once per member. Bounded: it
#: starts over past this many distinct subscriptions.
_SUBSCRIPTIONS: dict[tuple[str, ...], tuple[str, ...]] = {}
_SUBSCRIPTIONS_LIMIT = 4096


def _shared_subscription(topics: tuple[str, ...]) -> tuple[str, ...]:
    shared = _SUBSCRIPTIONS.get(topics)
    if shared is None:
        if len(_SUBSCRIPTIONS) >= _SUBSCRIPTIONS_LIMIT:
            _SUBSCRIPTIONS.clear()
        _SUBSCRIPTIONS[topics] = shared = topics
    return shared


@dataclass(frozen=True)
class Member:
    """A consumer group member as an assignor sees it.

    ``topics``: subscribed topics; ``owned``: partitions it owned before this rebalance (from
    sticky userData or subscription v1+); ``generation``: the generation those were owned in
    (-1 = unknown); ``rack``: ``client.rack`` (subscription v3); ``priority``: failover priority
    (a 4-byte big-endian int in userData; ``None`` ranks below every number);
    ``group_instance_id``: ``group.instance.id`` of a static member (Java's range and roundrobin
    order static members first, by instance id, then dynamic members by member id).
    """

    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1
    rack: str | None = None
    priority: int | None = None
    group_instance_id: str | None = None

    def __init__(
        self,
        topics: Iterable[str],
        owned: Iterable[TopicPartition | tuple[str, int]] = (),
        generation: int = -1,
        rack: str | None = None,
        priority: int | None = None,
        group_instance_id: str | None = None,
    ) -> None:
        if isinstance(topics, str):
            raise InvalidArgumentError(
                f"topics must be an iterable of topic names, not the single string {topics!r}"
            )
        for name, value in (("topics", topics), ("owned", owned)):
            if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                raise InvalidArgumentError(f"{name} must be an iterable, got {value!r:.60}")
        topic_names = list(topics)
        for topic in topic_names:
            if not isinstance(topic, str):
                raise InvalidArgumentError(f"topic names must be str, got {topic!r:.60}")
        topic_list = _shared_subscription(tuple(sorted(set(topic_names))))
        if isinstance(generation, bool) or not isinstance(generation, int):
            raise InvalidArgumentError(f"generation must be an int, got {generation!r}")
        check_priority(priority)
        if rack is not None and not isinstance(rack, str):
            raise InvalidArgumentError(f"rack must be a str or None, got {rack!r}")
        if group_instance_id is not None and not isinstance(group_instance_id, str):
            raise InvalidArgumentError(f"group_instance_id must be a str or None, got {group_instance_id!r}")
        object.__setattr__(self, "topics", topic_list)
        object.__setattr__(self, "owned", tuple(_as_topic_partition(tp) for tp in owned))
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "rack", rack)
        object.__setattr__(self, "priority", priority)
        object.__setattr__(self, "group_instance_id", group_instance_id)


@dataclass(frozen=True, order=True)
class Broker:
    """A broker id and its ``broker.rack`` (``None`` when the broker has no rack label)."""

    id: int
    rack: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.id, bool) or not isinstance(self.id, int) or not 0 <= self.id <= 2**31 - 1:
            # Kafka's broker.id / node.id is a Java int
            raise InvalidArgumentError(f"broker id must be an int in [0, 2147483647], got {self.id!r:.40}")
        if self.rack is not None and not isinstance(self.rack, str):
            raise InvalidArgumentError(f"broker rack must be a str or None, got {self.rack!r}")
