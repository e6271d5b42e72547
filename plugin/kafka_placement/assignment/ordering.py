"""Java's ordering of group members (``MemberInfo``) and the TopicPartition list helper.

Java string order itself (``String.compareTo``, UTF-16 code units) lives in :mod:`kafka_placement.java`;
``java_sorted`` and ``java_string_key`` are re-exported here for the assignors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from kafka_placement.java import java_sorted, java_string_key
from kafka_placement.vocabulary import TopicPartition

__all__ = ["java_sorted", "java_string_key", "member_sort_key", "sorted_members", "topic_partitions"]

T = TypeVar("T")
_new_tuple = tuple.__new__


def member_sort_key(member_id: str, group_instance_id: str | None) -> tuple[int, bytes]:
    """Java ``AbstractPartitionAssignor.MemberInfo`` order: static members first (by
    ``group.instance.id``), then dynamic members (by member id)."""
    if group_instance_id is not None:
        return (0, java_string_key(group_instance_id))
    return (1, java_string_key(member_id))


def sorted_members(members: Iterable[T], key: Callable[[T], tuple[str, str | None]]) -> list[T]:
    """Members sorted in Java ``MemberInfo`` order; ``key`` returns (member id, instance id)."""
    return sorted(members, key=lambda m: member_sort_key(*key(m)))


def topic_partitions(topic: str, partitions: Iterable[int]) -> list[TopicPartition]:
    """``[TopicPartition(topic, p) for p in partitions]`` without the NamedTuple constructor's
    Python-level call per item (the hot loop of assigning a million partitions)."""
    return [_new_tuple(TopicPartition, (topic, p)) for p in partitions]
